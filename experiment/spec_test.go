package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/scalelab/scalelab/engine/memory"
	_ "github.com/scalelab/scalelab/engine/null"
	_ "github.com/scalelab/scalelab/engine/sqlite"
	_ "github.com/scalelab/scalelab/scenario/mhealth"
	_ "github.com/scalelab/scalelab/scenario/social"
	_ "github.com/scalelab/scalelab/scenario/ycsb"
)

func mustParse(t *testing.T, src string) *Spec {
	t.Helper()
	s, err := Parse("x.yaml", []byte(src), "")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return s
}

// mustMatrix is the spec's combinations; n >= 0 is how many there must be.
func mustMatrix(t *testing.T, s *Spec, n int) []*Combination {
	t.Helper()
	combos, err := s.Matrix()
	if err != nil || (n >= 0 && len(combos) != n) {
		t.Fatalf("matrix: %d combinations, want %d: %v", len(combos), n, err)
	}
	return combos
}

func TestParseFull(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `
name: demo
description: a demo
scenario: ycsb
engine: memory
settings:
  ycsb.records: 500
load:
  users: 4
  duration: 2s
  warmup: 500ms
  think: 0-5ms
factors:
  memory.latency: [0s, 1ms]
  users: [2, 8]
repeats: {until_ci_within: 4%, min: 3, max: 20}
order: randomized
baseline: {users: 8}
slo: ["p95 < 1s for read", "errors < 1%"]
results: out/demo
`)
	if s.Name != "demo" || s.Scenario.Text != "ycsb" || s.Engine.Text != "memory" || s.Order != OrderRandomized {
		t.Errorf("spec %+v", s)
	}
	if len(s.Settings) != 1 || s.Settings[0].Key != "ycsb.records" || s.Settings[0].Pos.Line != 7 {
		t.Errorf("settings %+v", s.Settings)
	}
	if len(s.Factors) != 2 || s.Factors[1].Name != "users" || len(s.Factors[1].Levels) != 2 || s.Factors[1].Levels[1].Label != "8" {
		t.Errorf("factors %+v", s.Factors)
	}
	if r := s.Repeats; r.UntilCIWithin != 0.04 || r.Min != 3 || r.Max != 20 || r.Metric != "throughput" {
		t.Errorf("repeats %+v", r)
	}
	if len(s.SLO) != 2 || s.SLO[0].Expr.Op != "read" {
		t.Errorf("slo %+v", s.SLO)
	}
	combos := mustMatrix(t, s, -1)
	if len(combos) != 4 {
		t.Fatalf("%d combinations, want 4", len(combos))
	}
	// The last factor varies fastest; baseline is latency=0s users=8.
	if combos[1].Label != "memory.latency=0s users=8" || !combos[1].Baseline || combos[0].Baseline {
		t.Errorf("combos %+v %+v", combos[0], combos[1])
	}
	o := s.RunOptions(combos[3], 2, "dir", ClusterNames{})
	if o.Users != 8 || o.Seed != 2 || o.Duration.String() != "2s" || o.Think != "0-5ms" || !o.Given["users"] || o.Engine != "memory" {
		t.Errorf("run options %+v", o)
	}
	if strings.Join(o.Sets, " ") != "ycsb.records=500 memory.latency=1ms" {
		t.Errorf("sets %q", o.Sets)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
}

// Every error is reported at once, with file:line:column, the field, what
// is allowed and a did-you-mean.
func TestParseErrorsAllAtOnce(t *testing.T) {
	t.Parallel()
	src := `scenario: ycsb
repeat: 5
order: interleave
load:
  users: many
  duraton: 1s
factors:
  usres: [1, 2]
  users: []
repeats: {min: 3}
slo: p95 < 1
combinations: {max_changed: 0}
`
	_, err := Parse("bad.yaml", []byte(src), "")
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v is not Errors", err)
	}
	wants := []string{
		`bad.yaml:2:1: unknown key "repeat"; allowed: name, description,`,
		`(did you mean "repeats"?)`,
		`bad.yaml:3:8: order: "interleave": allowed: interleaved|randomized|grouped (did you mean "interleaved"?)`,
		`bad.yaml:5:10: load.users: "many": allowed: an integer in [1, 1000000]`,
		`bad.yaml:6:3: load: unknown key "duraton"`, `(did you mean "duration"?)`,
		`bad.yaml:8:3: factors.usres: unknown factor "usres"`, `(did you mean "users"?)`,
		`bad.yaml:9:10: factors.users: expected a non-empty list of levels`,
		`bad.yaml:10:10: repeats: a mapping needs until_ci_within`,
		`bad.yaml:11:6: slo: bad SLO "p95 < 1": latency "1" needs a unit`,
		`bad.yaml:12:29: combinations.max_changed: "0": allowed: an integer in [1, 64]`,
	}
	msg := err.Error()
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("errors lack %q:\n%s", w, msg)
		}
	}
	if !strings.HasPrefix(msg, "9 errors in the experiment file:") {
		t.Errorf("count: %s", msg)
	}
	// Sorted by position.
	for i := 1; i < len(errs); i++ {
		if errs[i].Pos.Line < errs[i-1].Pos.Line {
			t.Errorf("errors out of order: %v", errs)
		}
	}
}

func TestParseErrorCases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, want string }{
		{"empty", "", "x.yaml:1:1: the file is empty"},
		{"not a mapping", "- a\n- b\n", "x.yaml:1:1: the file must be a mapping"},
		{"syntax", "scenario: [ycsb\n", "x.yaml:"},
		{"no scenario", "engine: memory\n", "scenario: missing"},
		{"duplicate", "scenario: ycsb\nscenario: ycsb\n", "x.yaml:2:1: scenario: duplicate key"},
		{"bundle level for a value factor", "scenario: ycsb\nfactors:\n  users: [{a: 1}]\n", "the levels of users are values"},
		{"bad level key", "scenario: ycsb\nfactors:\n  cfg: [{label: x, usres: 2}]\n", `(did you mean "users"?)`},
		{"duplicate level", "scenario: ycsb\nfactors:\n  users: [2, 2]\n", `duplicate level "2"`},
		{"bad setting key", "scenario: ycsb\nsettings:\n  records: 5\n", `"records" is not a setting key`},
		{"percent", "scenario: ycsb\nrepeats: {until_ci_within: 4}\n", "a percentage in (0%, 100%]"},
		{"max below min", "scenario: ycsb\nrepeats: {until_ci_within: 4%, min: 5, max: 3}\n", "max 3 is below min 5"},
		{"latency rule needs op", "scenario: ycsb\nrepeats: {until_ci_within: 4%, metric: p95}\n", "needs an op"},
		{"search start above max", "scenario: ycsb\nsearch: {start: 10, max: 5}\n", "start 10 is above max 5"},
		{"bad think", "scenario: ycsb\nload: {think: soon}\n", "soon"},
		{"bad rate level", "scenario: ycsb\nfactors:\n  rate: [fast]\n", `rate "fast"`},
		{"merge key", "scenario: ycsb\nload: &l {users: 2}\nx: {<<: *l}\n", `unknown key "x"`},
		{"cluster field", "scenario: ycsb\nclusters:\n  memory: {nodse: 2}\n", `(did you mean "nodes"?)`},
		{"nodes level", "scenario: ycsb\nfactors:\n  nodes: [0]\n", `"0": allowed: an integer in [1, 16]`},
		{"combination list", "scenario: ycsb\ncombinations: []\n", "the list is empty"},
		{"cpus level", "scenario: ycsb\nfactors:\n  cpus: [\"0\"]\n", `cpus "0": allowed: cores from 0.01 to 1024`},
		{"memory field", "scenario: ycsb\nclusters:\n  postgres: {memory: 1k}\n", `memory "1k": allowed: a size of at least 4 MiB`},
		{"cpuset level", "scenario: ycsb\nfactors:\n  cpuset: [a]\n", `cpuset "a": not a CPU list`},
		{"combinations word", "scenario: ycsb\ncombinations: ful\n", `(did you mean "full"?)`},
		{"link level", "scenario: ycsb\nfactors:\n  link: [\"delay=0.5ms\"]\n", "whole milliseconds"},
		{"link field", "scenario: ycsb\nclusters:\n  postgres: {link: \"lag=1ms\"}\n", `unknown key "lag"`},
		{"netns field", "scenario: ycsb\nclusters:\n  postgres: {netns: maybe}\n", "maybe"},
	} {
		_, err := Parse("x.yaml", []byte(tc.src), "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v lacks %q", tc.name, err, tc.want)
		}
	}
}

// TestLinkFactor: the same cluster with two link settings is two
// clusters, each with its links (and so its own network).
func TestLinkFactor(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `
scenario: ycsb
engine: postgres
clusters:
  postgres: {replicas: 1, netns: true}
factors:
  link: ["delay=1ms", "delay=5ms; node2:loss=1%"]
`)
	combos := mustMatrix(t, s, -1)
	if len(combos) != 2 || combos[0].Cluster == nil || combos[1].Cluster == nil {
		t.Fatalf("combinations %+v", combos)
	}
	if !combos[0].Cluster.Netns || combos[0].Cluster.Link != "delay=1ms" || strings.Join(combos[1].Cluster.LinkSpecs(), " ") != "delay=5ms node2:loss=1%" {
		t.Errorf("clusters %+v %+v", combos[0].Cluster, combos[1].Cluster)
	}
	if g := groups(combos); len(g) != 2 {
		t.Errorf("%d cluster groups, want one per link setting", len(g))
	}
}

func TestMaxChangedAndLists(t *testing.T) {
	t.Parallel()
	// The mHealth design: four settings, their singles, doubles, triples.
	s := mustParse(t, `
scenario: ycsb
engine: memory
factors:
  a: [{label: off}, {label: on, memory.latency: 1ms}]
  b: [{label: off}, {label: on, memory.latency_jitter: 1ms}]
  c: [{label: off}, {label: on, memory.error_rate: 0.01}]
  d: [{label: off}, {label: on, ycsb.workload: b}]
combinations: {max_changed: 3}
`)
	combos := mustMatrix(t, s, -1)
	if len(combos) != 1+4+6+4 {
		t.Fatalf("%d combinations, want 15", len(combos))
	}
	if combos[0].Label != "default" || !combos[0].Baseline || combos[1].Label != "a=on" || combos[14].Label != "b=on + c=on + d=on" {
		t.Errorf("labels %q %q %q", combos[0].Label, combos[1].Label, combos[14].Label)
	}
	if got := strings.Join(combos[14].Sets, " "); got != "memory.latency_jitter=1ms memory.error_rate=0.01 ycsb.workload=b" {
		t.Errorf("sets %q", got)
	}

	s = mustParse(t, `
scenario: ycsb
factors:
  engine: [sqlite, memory]
  users: [1, 4]
combinations:
  - {engine: memory, name: fast}
  - {engine: sqlite, users: 4}
baseline: fast
`)
	combos = mustMatrix(t, s, 2)
	if combos[0].Label != "fast" || !combos[0].Baseline || combos[0].Engine != "memory" || combos[1].Label != "engine=sqlite users=4" {
		t.Errorf("list %+v %+v", combos[0], combos[1])
	}

	// A baseline naming some factors: compared all else equal.
	s = mustParse(t, `
scenario: ycsb
settings: {memory.latency: 1ms, ycsb.records: 10}
factors:
  test: [{label: reads, ycsb.workload: c}, {label: updates, ycsb.workload: a, ycsb.records: 20}]
  engine: [sqlite, memory]
baseline: {engine: sqlite}
`)
	combos = mustMatrix(t, s, -1)
	var got []string
	for _, c := range combos {
		got = append(got, fmt.Sprintf("%s>%s:%v", c.ID, c.ComparedTo, c.Baseline))
	}
	if strings.Join(got, " ") != "c01>c01:true c02>c01:false c03>c03:true c04>c03:false" {
		t.Errorf("partial baseline: %v", got)
	}
	if r := s.BaselineRule(combos); r != "the combination with engine=sqlite, all else equal" {
		t.Errorf("rule %q", r)
	}
	// A level's setting replaces the file's; another engine's setting stays out.
	if strings.Join(combos[3].Sets, " ") != "memory.latency=1ms ycsb.workload=a ycsb.records=20" || strings.Join(combos[2].Sets, " ") != "ycsb.workload=a ycsb.records=20" {
		t.Errorf("sets %q / %q", combos[3].Sets, combos[2].Sets)
	}

	for _, tc := range []struct{ src, want string }{
		{"scenario: ycsb\nfactors:\n  users: [1, 2]\ncombinations:\n  - {usres: 1}\n", `"usres" is not a factor; factors: users (did you mean "users"?)`},
		{"scenario: ycsb\nfactors:\n  users: [1, 2]\ncombinations:\n  - {users: 3}\n", `"3" is not a level of users; levels: 1, 2`},
		{"scenario: ycsb\nfactors:\n  users: [1, 2]\ncombinations:\n  - {users: 1}\n  - {users: 1}\n", `repeats c01`},
		{"scenario: ycsb\nfactors:\n  users: [1, 2]\nbaseline: {users: 3}\n", `x.yaml:4:19: baseline.users: "3" is not a level`},
		{"scenario: ycsb\nfactors:\n  users: [1, 2]\nbaseline: users=3\n", `"users=3" names no combination`},
		{"scenario: ycsb\nfactors:\n  users: [1, 2]\n  u2: [{users: 5}]\n", `users is set by factor users too`},
		{"scenario: ycsb\nfactors:\n  users: [1, 2]\ncombinations: [{users: 2}]\nbaseline: {users: 1}\n", "combination c01 (users=2) has no baseline: users=1 does not run"},
	} {
		s := mustParse(t, tc.src)
		if _, err := s.Matrix(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v lacks %q", tc.src, err, tc.want)
		}
	}
}

func TestValidateAgainstBuild(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{"scenario: nosuch\n", "x.yaml:1:11: scenario: scenario nosuch is not available in this build; available: "},
		{"scenario: ycbs\n", `(did you mean "ycsb"?)`},
		{"scenario: ycsb\nengine: foodb\n", "x.yaml:2:9: engine: engine foodb is not available in this build"},
		{"scenario: ycsb\nfactors:\n  engine: [memory, sqlit]\n", `(did you mean "sqlite"?)`},
		{"scenario: ycsb\nengine: memory\nsettings:\n  memory.latncy: 1ms\n", `did you mean "memory.latency"`},
		{"scenario: ycsb\nengine: memory\nsettings:\n  memory.latency: fast\n", `x.yaml:4:19: settings.memory.latency: bad setting value: memory.latency="fast"`},
		{"scenario: ycsb\nengine: memory\nsettings:\n  ycsb.workload: z\n", `allowed: a|b|c|d|e|f`},
		{"scenario: ycsb\nengine: memory\nsettings:\n  foo.bar: 1\n", `setting "foo.bar" belongs to none of this experiment's scenario and engines (scenario ycsb, engine memory)`},
		{"scenario: ycsb\nfactors:\n  engine: [sqlite, memory]\n  memory.latency: [0s, 1ms]\n", "is a setting of engine memory, but the combination runs engine sqlite"},
		{"scenario: ycsb\nengine: sqlite\nclusters:\n  sqlite: {nodes: 2}\n", `engine "sqlite" cannot start local clusters`},
		{"scenario: ycsb\nengine: sqlite\nclusters:\n  memory: {}\n", "no run uses engine memory"},
		{"scenario: ycsb\nengine: memory\nload: {duration: 1s, warmup: 2s}\n", "combination c01 (default): run: --warmup 2s leaves nothing to measure"},
		{"scenario: ycsb\nengine: memory\nsearch: {on: users}\n", "a knee search needs an slo"},
		{"scenario: ycsb\nengine: memory\nslo: p95<1s\nfactors: {users: [1, 2]}\nsearch: {on: users}\n", "cannot be a factor too"},
		{"scenario: ycsb\nengine: memory\nslo: p95<1s\nload: {model: closed}\nsearch: {on: rate}\n", "needs the rate model"},
	} {
		s, err := Parse("x.yaml", []byte(tc.src), "")
		if err == nil {
			err = s.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v lacks %q", tc.src, err, tc.want)
		}
	}
	// Engine settings go only to that engine's runs.
	s := mustParse(t, "scenario: ycsb\nfactors:\n  engine: [sqlite, memory]\nsettings:\n  memory.latency: 1ms\n  sqlite.synchronous: normal\n")
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	combos, _ := s.Matrix()
	if strings.Join(combos[0].Sets, ",") != "sqlite.synchronous=normal" || strings.Join(combos[1].Sets, ",") != "memory.latency=1ms" {
		t.Errorf("sets %q %q", combos[0].Sets, combos[1].Sets)
	}
}

func TestProfiles(t *testing.T) {
	t.Parallel()
	src := `
scenario: ycsb
engine: memory
load: {users: 2, duration: 1s}
repeats: 3
profiles:
  study:
    load: {duration: 10m}
    repeats: {until_ci_within: 4%, min: 3, max: 30}
    settings: {ycsb.records: 100000}
`
	s, err := Parse("p.yaml", []byte(src), "study")
	if err != nil {
		t.Fatal(err)
	}
	load := map[string]string{}
	for _, a := range s.Load {
		load[a.Key] = a.Value
	}
	if load["users"] != "2" || load["duration"] != "10m" || s.Repeats.UntilCIWithin != 0.04 || len(s.Settings) != 1 || s.Profile != "study" {
		t.Errorf("profile not applied: %+v %+v %+v", load, s.Repeats, s.Settings)
	}
	s, _ = Parse("p.yaml", []byte(src), "")
	if s.Repeats.Fixed != 3 || len(s.Profiles) != 1 {
		t.Errorf("without profile: %+v", s)
	}
	// ~ removes a key.
	s, err = Parse("p.yaml", []byte(src+"  quick:\n    repeats: ~\n    load: {duration: ~}\n"), "quick")
	if err != nil || s.Repeats.Fixed != 3 || len(s.Load) != 1 || s.Load[0].Key != "users" {
		t.Errorf("removing keys: %+v %+v %v", s.Repeats, s.Load, err)
	}
	if _, err := Parse("p.yaml", []byte(src), "stdy"); err == nil || !strings.Contains(err.Error(), `--profile "stdy": the file defines no such profile; it defines: study (did you mean "study"?)`) {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := Parse("p.yaml", []byte("scenario: ycsb\nprofiles:\n  a: {repeets: 2}\n"), ""); err == nil || !strings.Contains(err.Error(), `did you mean "repeats"`) {
		t.Errorf("bad profile key: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"scenario: ycsb\nfactors:\n  users: [1, 2]\nrepeats: 2\n",
		"scenario: ycsb\nfactors:\n  a: [{label: x, memory.latency: 1ms}, {label: y}]\ncombinations: {max_changed: 1}\nbaseline: default\n",
		"scenario: ycsb\nrepeats: {until_ci_within: 4%, min: 3, max: 30}\nslo: [p95<1s, errors<1%]\norder: grouped\n",
		"scenario: ycsb\nfactors: {engine: [sqlite, memory], users: [1,2]}\ncombinations: [{engine: memory}, {users: 2, name: n}]\n",
		"scenario: ycsb\nsearch: {on: users, start: 2, max: 64, precision: 10%}\nslo: p99<10ms\nclusters: {memory: {nodes: 2}}\n",
		"a: &x [1, *x]\n",
		"profiles: {p: {load: {users: 3}}}\nscenario: ycsb\n",
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte("profiles: {p: {load: {users: 3}}}\nscenario: ycsb\n"), "p")
	f.Fuzz(func(t *testing.T, data []byte, profile string) {
		if ps, perrs := parse("f.yaml", data, profile); ps != nil && len(perrs) > 0 {
			_ = ps.validate(true) // what Load checks of a file with errors: no panic
		}
		s, err := Parse("f.yaml", data, profile)
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %v is not a non-empty Errors", err)
			}
			for _, e := range errs {
				if e.File != "f.yaml" || e.Msg == "" {
					t.Fatalf("bad error %+v", e)
				}
			}
			return
		}
		if s.Scenario.Text == "" && !s.Scenario.Set {
			t.Fatal("parsed without a scenario")
		}
		if combos, err := s.Matrix(); err == nil && len(combos) == 0 {
			t.Fatal("a matrix without combinations")
		}
	})
}

func TestMatrixLimits(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("scenario: ycsb\nfactors:\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "  f%d: [{label: a}, {label: b}, {label: c}, {label: d}, {label: e, users: %d}]\n", i, i+1)
	}
	s := mustParse(t, b.String())
	if _, err := s.Matrix(); err == nil || !strings.Contains(err.Error(), "more than 10000 combinations") {
		t.Errorf("huge product: %v", err)
	}
	b.WriteString("combinations: {max_changed: 1}\n")
	s = mustParse(t, b.String())
	combos, err := s.Matrix()
	if err != nil || len(combos) != 1+20*4 {
		t.Errorf("max_changed 1 over 20 factors: %d, %v", len(combos), err)
	}
}

// The example files parse with every profile, and those whose scenario and
// engines this test binary has validate too.
func TestExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	runnable := map[string]bool{"social-mixes.yaml": true, "mhealth-users.yaml": true, "mhealth-knee.yaml": true, "ycsb-cache.yaml": true}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("# ")) {
			t.Errorf("%s: no comment block on the study", f)
		}
		s, err := Parse(f, b, "")
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, p := range s.Profiles {
			ps, err := Parse(f, b, p)
			if err != nil {
				t.Errorf("%s --profile %s: %v", f, p, err)
				continue
			}
			if p == "quick" {
				t.Errorf("%s: a quick profile; every example's default is its quick form and `study` its study-sized one", f)
			}
			// the default is the quick form: the study profile measures
			// no less than it
			if p != "study" {
				continue
			}
			quick, qerr := s.Estimate(0)
			study, serr := ps.Estimate(0)
			if qerr == nil && serr == nil && study.ByOps == 0 && quick.MaxLoad > study.MaxLoad {
				t.Errorf("%s: the default measures %s, more than --profile study's %s", f, quick.MaxLoad, study.MaxLoad)
			}
		}
		if runnable[filepath.Base(f)] {
			if err := s.Validate(); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}

// A file that names one cluster and no engine runs that cluster's engine,
// as `run --cluster` does; an explicit engine still wins.
func TestClusterImpliesEngine(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "scenario: mhealth\nclusters:\n  postgres: {replicas: 1}\n")
	if got := s.DefaultEngine(); got != "postgres" {
		t.Fatalf("default engine %q, want postgres (the file's only cluster)", got)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	combos := mustMatrix(t, s, -1)
	if len(combos) != 1 || combos[0].Engine != "postgres" || combos[0].Cluster == nil || combos[0].Cluster.Engine != "postgres" {
		t.Errorf("combination %+v: want engine postgres on its cluster", combos[0])
	}
	if got := mustParse(t, "scenario: logs\nengine: sqlite\nclusters:\n  postgres: {}\n").DefaultEngine(); got != "sqlite" {
		t.Errorf("explicit engine: default %q, want sqlite", got)
	}
	if got := mustParse(t, "scenario: logs\n").DefaultEngine(); got != "sqlite" {
		t.Errorf("no engine, no cluster: default %q, want sqlite", got)
	}
}
