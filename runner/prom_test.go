package runner

import (
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
)

// TestUnobserved: a store by --target (not embedded) and a web app by URL
// are tiers nothing observes until a mapping does; embedded stores (and
// the null engine) are scalelab's own.
func TestUnobserved(t *testing.T) {
	plan := func(o *Options) *Plan {
		t.Helper()
		o.Arrivals, o.Seed = "constant", 1
		p, err := NewPlan(o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	doc := &results.Run{}
	for _, c := range []struct {
		name     string
		opts     *Options
		observed map[string]bool
		want     []results.Unobserved
	}{
		{"null", &Options{Scenario: "ycsb", Engine: "null"}, nil, nil},
		{"sqlite", &Options{Scenario: "ycsb"}, nil, nil},
		{"postgres target", &Options{Scenario: "ycsb", Engine: "postgres", Target: "postgres://bench@db1:5432/b"}, nil,
			[]results.Unobserved{{Tier: "store", At: "postgres://bench@db1:5432/b"}}},
		{"postgres observed", &Options{Scenario: "ycsb", Engine: "postgres", Target: "postgres://bench@db1:5432/b"}, map[string]bool{"store": true}, nil},
		{"app by URL", &Options{Scenario: "mhealth", Sets: []string{"mhealth.app=http://web1:8080"}}, nil,
			[]results.Unobserved{{Tier: "app", At: "http://web1:8080"}}},
	} {
		got := plan(c.opts).unobserved(c.observed, doc)
		if len(got) != len(c.want) || len(got) > 0 && got[0] != c.want[0] {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestNoSampleWarnings: each tier observed without a sample is warned of
// (its figures are unknown, not zero); the generator's is not, as the
// saturation verdict already says the run was too short to sample.
func TestNoSampleWarnings(t *testing.T) {
	w := noSampleWarnings(&results.Telemetry{NoSamples: []string{"store", "generator"}})
	if len(w) != 1 || !strings.Contains(w[0], "tier store: no samples") || !strings.Contains(w[0], "unknown, not zero") {
		t.Errorf("warnings %q", w)
	}
}
