package experiment

import (
	"testing"

	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/slo"
)

// TestExpectedProjectsTheCI: with adaptive repeats the runs still expected
// follow the CI so far (not "one more"), within min and max.
func TestExpectedProjectsTheCI(t *testing.T) {
	t.Parallel()
	table := func(v float64) slo.Table { return slo.Table{slo.AllOps: slo.Figures{"throughput": v}} }
	x := &executor{s: &Spec{Repeats: Repeats{UntilCIWithin: 0.05, Min: 3, Max: 20, Metric: "throughput"}}, combos: []*Combination{{ID: "c01"}}}
	attempts := map[int]int{0: 3}
	// 3 values with a 95% CI of about ±25%: far from 5%, the projection
	// asks for many more, capped by max
	x.tables = [][]slo.Table{{table(100), table(110), table(90)}}
	st := stats.Summarize(x.ruleValues(0))
	if st.CIHalfPct == nil || *st.CIHalfPct < 20 {
		t.Fatalf("CI %v", st.CIHalfPct)
	}
	if got := x.expected(0, attempts); got != 17 {
		t.Errorf("expected with CI ±%.0f%% after 3 of at most 20: %d, want 17 (max)", *st.CIHalfPct, got)
	}
	// 6 values within about ±6%: about 6*(6/5)^2 = 9 values in all
	x.tables = [][]slo.Table{{table(100), table(108), table(92), table(104), table(96), table(100)}}
	attempts[0] = 6
	st = stats.Summarize(x.ruleValues(0))
	ratio := *st.CIHalfPct / 5
	want := int(float64(6)*ratio*ratio+0.999999) - 6
	if want < 2 {
		t.Fatalf("the case's CI ±%.1f%% asks for %d more: not a case of several", *st.CIHalfPct, want)
	}
	if got := x.expected(0, attempts); got != max(want, 1) || got < 1 {
		t.Errorf("expected with CI ±%.1f%% after 6: %d, want %d", *st.CIHalfPct, got, want)
	}
	if most := x.most(attempts); most != 14 {
		t.Errorf("most = %d, want 14 (max 20 - 6 attempts)", most)
	}
	// converged: nothing more
	x.tables = [][]slo.Table{{table(100), table(100.1), table(99.9)}}
	attempts[0] = 3
	if got := x.expected(0, attempts); got != 0 {
		t.Errorf("expected when converged: %d", got)
	}
	if most := x.most(attempts); most != 0 {
		t.Errorf("most when converged: %d", most)
	}
}
