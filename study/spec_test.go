package study

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	_ "github.com/scalelab/scalelab/apptier"
	_ "github.com/scalelab/scalelab/engine/cassandra"
	_ "github.com/scalelab/scalelab/engine/memcached"
	_ "github.com/scalelab/scalelab/engine/mongodb"
	_ "github.com/scalelab/scalelab/engine/postgres"
	_ "github.com/scalelab/scalelab/engine/redis"
	_ "github.com/scalelab/scalelab/engine/search"
	_ "github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/examples"
	"github.com/scalelab/scalelab/scenario/logs"
	"github.com/scalelab/scalelab/scenario/mhealth"
	"github.com/scalelab/scalelab/scenario/records"
	"github.com/scalelab/scalelab/scenario/search"
	"github.com/scalelab/scalelab/scenario/social"
)

// scenarioOps are the operations of the scenarios the studies use, by
// registry name.
func scenarioOps() map[string][]string {
	return map[string][]string{
		"logs":    logs.OperationNames(),
		"mhealth": mhealth.OperationNames(),
		"search":  search.OperationNames(),
		"records": records.OperationNames(),
		"social":  social.OperationNames(),
	}
}

// TestEmbeddedStudies: five studies, every row names its source, and every
// experiment, profile, combination and operation a row refers to exists.
func TestEmbeddedStudies(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range all {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, ","); got != "000,001,002,003,004" {
		t.Fatalf("studies %s, want 000 to 004", got)
	}
	for key, want := range map[string]string{"004": "004", "4": "004", "whispr": "004", "004-whispr": "004", "0": "000"} {
		if s, err := Find(all, key); err != nil || s.ID != want {
			t.Errorf("Find(%q): %v, %v; want study %s", key, s, err, want)
		}
	}
	if _, err := Find(all, "7"); err == nil || !strings.Contains(err.Error(), "there are: 000") {
		t.Errorf("Find(7): %v; want the list of studies", err)
	}
	ops := scenarioOps()
	for _, s := range all {
		t.Run(s.ID, func(t *testing.T) {
			if len(s.Findings) == 0 || len(s.Experiments) == 0 {
				t.Fatalf("study %s has %d findings and %d experiments", s.ID, len(s.Findings), len(s.Experiments))
			}
			measured := 0
			for _, f := range s.Findings {
				if strings.TrimSpace(f.Source) == "" {
					t.Errorf("finding %s names no source", f.ID)
				}
				if f.NotReproducible == "" {
					measured++
				}
			}
			if measured == 0 {
				t.Errorf("study %s measures none of its findings", s.ID)
			}
			if err := CheckAgainst(s, examples.Files, ops); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestValidateRejects: the schema check names each kind of bad row.
func TestValidateRejects(t *testing.T) {
	good := `id: "009"
name: t
title: T
question: Q?
setup: S
experiments:
  - {name: e, example: social-mixes.yaml, profiles: {quick: "", full: study}}
findings:
  - id: f
    finding: F
    setup: S
    source: Table 1
    published: [{label: a, value: 1, unit: ms}]
    about: a / b
    expect: lower
    measure: {experiment: e, levels: {mix: D2}, op: users.read, metric: mean}
    reference: {levels: {mix: D1}}
`
	if _, err := Parse("good.yaml", []byte(good)); err != nil {
		t.Fatalf("good file refused: %v", err)
	}
	cases := []struct{ name, from, to, want string }{
		{"no source", "source: Table 1", "source: \"\"", "source is empty"},
		{"bad direction", "expect: lower", "expect: down", "expect \"down\""},
		{"unknown experiment", "measure: {experiment: e,", "measure: {experiment: x,", "not among the study's experiments"},
		{"bad metric", "metric: mean}", "metric: median}", "metric of"},
		{"no reference", "    reference: {levels: {mix: D1}}\n", "", "needs a reference"},
		{"unknown field", "about: a / b", "about: a / b\n    ratio: 2", "field ratio not found"},
		{"missing profile", "profiles: {quick: \"\", full: study}", "profiles: {quick: \"\"}", "no entry for \"full\""},
		{"unit missing", "unit: ms}", "unit: \"\"}", "needs a label and a unit"},
		{"a tab", "\n    about: a / b", "\n\tabout: a / b", "study file bad.yaml:%d:1: a tab character; YAML indents with spaces only (replace the tab with spaces)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(good, c.from, c.to, 1)
			if bad == good {
				t.Fatalf("case does not change the file")
			}
			_, err := Parse("bad.yaml", []byte(bad))
			if strings.Contains(c.want, "%d") { // the line of the change
				c.want = fmt.Sprintf(c.want, strings.Count(good[:strings.Index(good, c.from)+1], "\n")+1)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestCheckAgainstRejects: a missing example, profile, level or operation
// is named.
func TestCheckAgainstRejects(t *testing.T) {
	file := func(example, full, level, op string) *Study {
		return &Study{ID: "009", Experiments: []Experiment{{Name: "e", Example: example, Profiles: map[string]string{"quick": "", "full": full}}},
			Findings: []Finding{{ID: "f", Measure: &Selector{Experiment: "e", Levels: map[string]string{"mix": level}, Op: op, Metric: "mean"}, Reference: &Selector{}}}}
	}
	fsys := fstest.MapFS{"m.yaml": {Data: []byte("name: m\nscenario: social\nfactors:\n  mix:\n    - {label: D1, social.mix: d1}\n    - {label: D2, social.mix: d2}\nprofiles:\n  study: {repeats: 5}\n")}}
	ops := scenarioOps()
	if err := CheckAgainst(file("m.yaml", "study", "D2", "users.read"), fsys, ops); err != nil {
		t.Fatalf("good study refused: %v", err)
	}
	cases := []struct {
		name string
		s    *Study
		want string
	}{
		{"no example", file("x.yaml", "study", "D2", "users.read"), "read examples/x.yaml"},
		{"no profile", file("m.yaml", "big", "D2", "users.read"), "big"},
		{"no level", file("m.yaml", "study", "D3", "users.read"), "no level \"D3\""},
		{"no operation", file("m.yaml", "study", "D2", "users.fly"), "no operation \"users.fly\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckAgainst(c.s, fsys, ops)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
