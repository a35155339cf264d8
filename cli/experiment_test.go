package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/experiment"
	"github.com/scalelab/scalelab/results/resultstest"
)

func TestExperimentAndCheckCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "xp.yaml")
	src := `# a small matrix on the memory engine
scenario: ycsb
engine: memory
settings: {ycsb.records: 100, memory.latency: 500us}
load: {users: 1, duration: 1s}   # long enough that a starved machine still measures operations
factors:
  users: [1, 2]
repeats: 2
slo: p95 < 1s, errors < 1%
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, ctx, "experiment", "validate", file)
	if code != 0 || !strings.Contains(out, "2 combinations") || !strings.Contains(out, "--users 2") {
		t.Fatalf("validate: %d %s %s", code, out, errs)
	}
	if !strings.Contains(out, "runs: 4 runs, about 4s of load, plus loading data\n") {
		t.Errorf("validate does not give the run count and time:\n%s", out)
	}
	xp := filepath.Join(dir, "out")
	code, out, errs = run(t, ctx, "experiment", "run", file, "--out", xp)
	if code != 0 || !strings.Contains(out, "all operations") || !strings.Contains(out, "c02 users=2") || !strings.Contains(errs, "[4/4] c02") {
		t.Fatalf("experiment run: %d\n%s\n%s", code, out, errs)
	}
	if page := filepath.Join(xp, "report.html"); !strings.Contains(out, "report: "+page) {
		t.Errorf("experiment run does not print its report's path %s:\n%s", page, out)
	} else if _, err := os.Stat(page); err != nil {
		t.Errorf("report.html: %v", err)
	}
	if _, err := experiment.ReadResult(xp); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run(t, ctx, "experiment", "show", xp); code != 0 || !strings.Contains(out, "status ok, 4 runs") {
		t.Errorf("show: %d %s", code, out)
	}
	// The release gate: the experiment's own SLO passes, a stricter one fails.
	if code, out, _ := run(t, ctx, "check", xp); code != 0 || !strings.Contains(out, "all checks passed") {
		t.Errorf("check: %d %s", code, out)
	}
	code, out, _ = run(t, ctx, "check", xp, "--slo", "p50<1us for read")
	if code != ExitCheckFailed || !strings.Contains(out, "FAIL c01 users=1") || !strings.Contains(out, "\n2 of 2 checks failed\n") {
		t.Errorf("check strict: %d %s", code, out)
	}
	runDir := filepath.Join(xp, "runs", "c01-r01")
	if code, out, _ := run(t, ctx, "check", runDir, "--slo", "p50<1s", "--json"); code != 0 || !strings.Contains(out, `"pass": true`) {
		t.Errorf("check run: %d %s", code, out)
	}
	if code, _, errs := run(t, ctx, "check", runDir, "--slo", "p99<"); code != ExitUsage || !strings.Contains(errs, "bad SLO") {
		t.Errorf("check bad slo: %d %s", code, errs)
	}
	if code, _, errs := run(t, ctx, "check", dir); code != ExitUsage || !strings.Contains(errs, "not a results directory") {
		t.Errorf("check non-results: %d %s", code, errs)
	}
	// run --slo: a failed objective is exit 1 and a run.json failure.
	rd := filepath.Join(dir, "slo-run")
	code, out, _ = run(t, ctx, "run", "ycsb", "--engine", "memory", "--ops", "300", "--set", "memory.latency=200us", "--slo", "p50<1ns for read", "--out", rd, "--progress", "off")
	if code != ExitCheckFailed || !strings.Contains(out, "FAILED: SLO p50<1ns for read: p50 of read") {
		t.Errorf("run --slo: %d %s", code, out)
	}
	if r := resultstest.Read(t, rd); r.ExitCode != 1 || len(r.Failures) != 1 {
		t.Errorf("run.json %+v", r.Failures)
	}
	// a met objective is said too
	code, out, _ = run(t, ctx, "run", "ycsb", "--engine", "memory", "--ops", "300", "--slo", "p50<1s for read", "--out", filepath.Join(dir, "slo-met"), "--progress", "off")
	if code != 0 || !strings.Contains(out, "slo: met: p50<1s for read") {
		t.Errorf("run --slo met: %d %s", code, out)
	}
	if code, _, errs := run(t, ctx, "run", "ycsb", "--slo", "p95 < soon", "--out", filepath.Join(dir, "never")); code != ExitUsage || !strings.Contains(errs, "--slo: bad SLO") {
		t.Errorf("run bad --slo: %d %s", code, errs)
	}
}

func TestExperimentBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.yaml", "scenario: ycsb\nrepeats: five\nordr: grouped\n")
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"experiment", "run", bad}, []string{"bad.yaml:2:10: repeats", "bad.yaml:3:1: unknown key \"ordr\"", `did you mean "order"`}},
		{[]string{"experiment", "run", write("s.yaml", "scenario: nosuch\n")}, []string{"s.yaml:1:11: scenario: scenario nosuch is not available in this build"}},
		{[]string{"experiment", "run", filepath.Join(dir, "missing.yaml")}, []string{"read experiment file"}},
		{[]string{"experiment", "run"}, []string{"no FILE.yaml given"}},
		{[]string{"experiment", "run", filepath.Join(dir, "missing.yaml"), "--repeats", "0"}, []string{"--repeats 0: at least 1"}},
		{[]string{"experiment", "validate", write("url.yaml", "scenario: ycsb\ntarget: postgres://u@h:5432/db\n")}, []string{"url.yaml:2:9: target:", "name the engine: --engine postgres"}},
		{[]string{"experiment", "frob"}, []string{`unknown subcommand "frob"`}},
		{[]string{"experiment", "knee", write("k.yaml", "scenario: ycsb\nengine: memory\n")}, []string{"a knee search needs an SLO"}},
		{[]string{"experiment", "knee", write("k2.yaml", "scenario: ycsb\nengine: memory\nslo: p95<1s\n"), "--on", "cpu"}, []string{"--on \"cpu\""}},
		{[]string{"experimnt"}, []string{`did you mean "experiment"`}},
	} {
		code, _, errs := run(t, ctx, tc.args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; %s", tc.args, code, errs)
		}
		for _, w := range tc.wants {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errs, w)
			}
		}
	}
}

// TestExperimentKneePlanRepeats checks that validate and --dry-run of a
// knee search show the runs per step its search: gives, not the file's
// repeat rule.
func TestExperimentKneePlanRepeats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "knee.yaml")
	src := "scenario: ycsb\nengine: memory\nload: {users: 1, duration: 1s}\nslo: p95 < 1s\nsearch: {on: users, start: 1, max: 8, repeats: 1}\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"experiment", "validate", file}, {"experiment", "run", file, "--dry-run"}} {
		code, out, errs := run(t, ctx, args...)
		if code != 0 || !strings.Contains(out, "repeats: 1 per load step") || !strings.Contains(out, ": 1 run per load step") || strings.Contains(out, "repeats: 3") {
			t.Errorf("%v: %d\n%s%s", args, code, out, errs)
		}
	}
	if code, out, _ := run(t, ctx, "experiment", "run", file, "--dry-run", "--repeats", "2"); code != 0 || !strings.Contains(out, "repeats: 2 per load step") {
		t.Errorf("--repeats 2: %d\n%s", code, out)
	}
}

// TestExperimentUnrunnableCombination checks that a file with a
// combination that cannot run (PostgreSQL without a server) and an SLO
// on an operation the scenario lacks is refused by validate with both
// problems, and by run the same way before any run starts: no results
// directory, not even the SQLite half run.
func TestExperimentUnrunnableCombination(t *testing.T) {
	t.Setenv("PGHOST", "") // postgres then needs a target or a cluster
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "xp.yaml")
	src := "scenario: ycsb\nsettings: {ycsb.records: 100}\nload: {users: 1, duration: 1s}\nfactors:\n  engine: [sqlite, postgres]\nslo: [p95 < 1s for reads]\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	wants := []string{"2 errors in the experiment file", "xp.yaml:5:20: combination c02 (engine=postgres): ", "none was named",
		`xp.yaml:6:7: slo: "p95 < 1s for reads": scenario ycsb has no operation "reads"`, `(did you mean "read"?)`}
	for _, args := range [][]string{{"experiment", "validate", file}, {"experiment", "run", file, "--out", out}} {
		code, stdout, stderr := run(t, ctx, args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; %s", args[:2], code, stderr)
		}
		for _, w := range wants {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", args[:2], w, stderr)
			}
		}
		if strings.Contains(stderr, "[1/") || strings.Contains(stdout, "ops/s") {
			t.Errorf("%v: a run started:\n%s\n%s", args[:2], stdout, stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("experiment run made %s (%v)", out, err)
	}
}
