package experiment

import (
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
