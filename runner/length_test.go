package runner

import (
	"testing"
	"time"

	"github.com/scalelab/scalelab/load"
)

// TestRunLengthRule: one rule for every scenario. A run given neither
// --duration, --ops nor --phases lasts load.DefaultDuration, social (whose
// study counts operations) included; --ops bounds it by operations alone.
func TestRunLengthRule(t *testing.T) {
	t.Parallel()
	for _, scen := range []string{"social", "ycsb"} {
		p, err := NewPlan(&Options{Scenario: scen, Engine: "null", Out: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: %v", scen, err)
		}
		if p.opts.Duration != load.DefaultDuration || p.opts.Ops != 0 {
			t.Errorf("%s: duration %s, ops %d; want %s and no operation budget", scen, p.opts.Duration, p.opts.Ops, load.DefaultDuration)
		}
	}
	p, err := NewPlan(&Options{Scenario: "social", Engine: "null", Ops: 250_000, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if p.opts.Duration != 0 || p.opts.Ops != 250_000 {
		t.Errorf("--ops 250000: duration %s, ops %d", p.opts.Duration, p.opts.Ops)
	}
	p, err = NewPlan(&Options{Scenario: "social", Engine: "null", Duration: 3 * time.Second, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if p.opts.Duration != 3*time.Second || p.opts.Ops != 0 {
		t.Errorf("--duration 3s: duration %s, ops %d", p.opts.Duration, p.opts.Ops)
	}
}
