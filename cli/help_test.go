package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/clustertest"
	"github.com/scalelab/scalelab/results/resultstest"
)

// Every command answers -h and --help with its help on stdout and exit 0.
func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"run", "--help"}, []string{"Usage: scalelab run SCENARIO", "Load:", "Engine and tiers:", "Output and checks:", "Faults:", "--users", "--cluster", "--fault"}},
		{[]string{"run", "ycsb", "-h"}, []string{"Usage: scalelab run SCENARIO", "--engine"}},
		{[]string{"help", "run"}, []string{"Usage: scalelab run SCENARIO", "--phases"}},
		{[]string{"list", "--help"}, []string{"Usage: scalelab list [WHAT [NAME]]", "scalelab list settings postgres"}},
		{[]string{"cluster", "--help"}, []string{"scalelab cluster up ENGINE"}},
		{[]string{"cluster", "up", "-h"}, []string{"scalelab cluster up ENGINE"}},
		{[]string{"experiment", "run", "--help"}, []string{"scalelab experiment run FILE.yaml"}},
		{[]string{"check", "--help"}, []string{"Usage: scalelab check"}},
		{[]string{"report", "-h"}, []string{"Usage: scalelab report"}},
		{[]string{"version", "--help"}, []string{"Usage: scalelab version"}},
		{[]string{"--help"}, []string{"scalelab run SCENARIO [flags]", "Exit codes"}},
	} {
		code, stdout, stderr := run(t, context.Background(), tc.args...)
		if code != 0 {
			t.Errorf("%v: exit %d, want 0; stderr %q", tc.args, code, stderr)
		}
		if strings.Contains(stdout+stderr, "help requested") {
			t.Errorf("%v: prints the flag package's %q instead of the help", tc.args, "help requested")
		}
		for _, w := range tc.wants {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v: help lacks %q:\n%s", tc.args, w, stdout)
			}
		}
		for i, line := range strings.Split(stdout, "\n") {
			if len(line) > 100 {
				t.Errorf("%v: help line %d is %d columns wide: %q", tc.args, i+1, len(line), line)
			}
		}
		if strings.Contains(stdout, "\n  -") && !strings.Contains(stdout, "--") {
			t.Errorf("%v: flags spelled -flag, not --flag", tc.args)
		}
	}
	if code, _, _ := run(t, context.Background(), "help", "nope"); code != ExitUsage {
		t.Errorf("help of an unknown command: exit %d, want 2", code)
	}
}

// `list` narrows to a section, and settings to one engine or scenario.
func TestListNarrows(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, context.Background(), "list", "settings", "ycsb")
	if code != 0 || !strings.Contains(out, "ycsb.workload") || strings.Contains(out, "sqlite.journal_mode") || strings.Contains(out, "SCENARIOS") {
		t.Errorf("list settings ycsb: exit %d, output:\n%s", code, out)
	}
	code, out, _ = run(t, context.Background(), "list", "scenarios")
	if code != 0 || !strings.Contains(out, "mhealth") || strings.Contains(out, "SETTINGS") || strings.Contains(out, "ENGINES") {
		t.Errorf("list scenarios: exit %d, output:\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "setings"}, `did you mean "settings"`},
		{[]string{"list", "settings", "postgress"}, `did you mean "postgres"`},
		{[]string{"list", "engines", "x"}, "takes no NAME"},
	} {
		code, _, stderr := run(t, context.Background(), tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// --cluster implies the cluster's engine; an --engine that disagrees is a
// usage error naming both. The cluster here is a state file only: the
// runs stop at the engine check or fail to connect, never reaching a server.
func TestClusterImpliesEngine(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SCALELAB_HOME", home)
	clustertest.Saved(t, &cluster.State{Name: "pgx1", Engine: "postgres", Target: "postgres://scalelab@127.0.0.1:1/scalelab", Params: map[string]string{}})
	out := filepath.Join(t.TempDir(), "r")
	code, _, stderr := run(t, context.Background(), "run", "logs", "--cluster", "pgx1", "--engine", "sqlite", "--out", out)
	if code != ExitUsage || !strings.Contains(stderr, "pgx1 is a postgres cluster") || !strings.Contains(stderr, "--engine sqlite") {
		t.Errorf("disagreeing --engine: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = run(t, context.Background(), "run", "logs", "--cluster", "pgx1", "--duration", "1s", "--out", out, "--progress", "off")
	if strings.Contains(stderr, "but --engine") || strings.Contains(stderr, "uses --engine sqlite") {
		t.Fatalf("--cluster alone was checked against the default engine: %s", stderr)
	}
	if code != ExitUnfinished {
		t.Errorf("--cluster alone: exit %d, want 4 (nothing listens on port 1); stderr %q", code, stderr)
	}
	if r := resultstest.Read(t, out); r.Engine != "postgres" {
		t.Errorf("run.json engine %q, want postgres (implied by the cluster)", r.Engine)
	}
}

// A description line over the width wraps, and its tail runs on into the
// next line of the paragraph instead of standing alone; blank lines,
// indented lines and list items keep their place.
func TestFlow(t *testing.T) {
	t.Parallel()
	text := "one two three four five six\nseven eight\n\n  indented line that is long\nplain\n- an item\nnine ten eleven twelve thirteen\n- next"
	got := strings.Join(flow(text, 20), "|")
	want := "one two three four|five six seven eight||  indented line that|  is long|plain|- an item|nine ten eleven|twelve thirteen|- next"
	if got != want {
		t.Errorf("flow:\n got %q\nwant %q", got, want)
	}
}
