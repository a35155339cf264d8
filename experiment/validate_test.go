package experiment

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestRateModelDefaultsArrivals checks that a rate-model experiment needs no
// `arrivals:`: runs default to constant arrivals, as `scalelab run` does.
func TestRateModelDefaultsArrivals(t *testing.T) {
	t.Parallel()
	for _, load := range []string{"{rate: 500/s, duration: 1s}", "{model: rate, rate: 500/s, duration: 1s}"} {
		s := mustParse(t, "scenario: ycsb\nengine: memory\nload: "+load+"\n")
		if err := s.Validate(); err != nil {
			t.Errorf("load %s: %v", load, err)
		}
	}
}

// TestPlanErrorHasLine checks that a combination the runner refuses is
// reported with a line, also for the combination of the file's defaults.
func TestPlanErrorHasLine(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "scenario: ycsb\nengine: memory\nload:\n  model: rate\n  duration: 1s\n")
	err := s.Validate()
	if err == nil {
		t.Fatal("a rate model without a rate validated")
	}
	if msg := err.Error(); !strings.Contains(msg, "x.yaml:4:") || !strings.Contains(msg, "needs --rate") {
		t.Errorf("error %q: want it at line 4 (load.model) and saying the rate is needed", msg)
	}
}

// TestParseResultsFile checks that an experiment's results given as an
// experiment file get one error saying what they are, not one per key.
func TestParseResultsFile(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(&Result{Schema: 1, Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(filepath.Join("out", "experiment.json"), b, "")
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 || !strings.Contains(err.Error(), "this is an experiment's results (experiment.json)") ||
		!strings.Contains(err.Error(), "scalelab experiment show out") {
		t.Errorf("error %v", err)
	}
}

// TestPlanNames checks that the plan names each combination's cluster,
// one name per cluster: combinations that vary a cluster differ.
func TestPlanNames(t *testing.T) {
	t.Parallel()
	s := mustParse(t, ycsbMemory("ycsb.records: 100", "users: 1, duration: 1s", `
clusters:
  memory: {}
factors:
  nodes: [1, 2]
  users: [1, 2]
`))
	combos := mustMatrix(t, s, 4)
	names := PlanNames(combos)
	want := map[string]string{"c01": "CLUSTER_c01", "c02": "CLUSTER_c01", "c03": "CLUSTER_c03", "c04": "CLUSTER_c03"}
	for _, c := range combos {
		if names[c.ID].Run != want[c.ID] {
			t.Errorf("%s (%s): cluster %q, want %q", c.ID, c.Label, names[c.ID].Run, want[c.ID])
		}
		if o := s.RunOptions(c, 1, "DIR", names[c.ID]); !strings.Contains(strings.Join(o.Args, " "), "--cluster "+want[c.ID]) {
			t.Errorf("%s: command %v lacks its cluster", c.ID, o.Args)
		}
	}
}
