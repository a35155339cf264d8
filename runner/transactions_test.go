package runner

import (
	"math"
	"testing"
	"time"

	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// TestTxSink: each closed interval's requests of every operation,
// successes and failures, go into the second's mean and into the phase
// the interval lies in (the drain after the last phase into the last);
// the phases' figures and the break follow.
func TestTxSink(t *testing.T) {
	m := &load.Phases{Phases: []load.Phase{{Duration: 2 * time.Second, Rate: 1}, {Duration: 2 * time.Second, Rate: 2}}}
	s := newTxSink(m)
	interval := func(i int, okMs []int64, errMs []int64) *metrics.Interval {
		a := metrics.OpStats{Name: "a", Lat: metrics.NewHist(), Err: metrics.NewHist()}
		b := metrics.OpStats{Name: "b", Lat: metrics.NewHist(), Err: metrics.NewHist()}
		for j, v := range okMs {
			h := a.Lat
			if j%2 == 1 {
				h = b.Lat
			}
			_ = h.RecordValue(v * 1e6)
		}
		for _, v := range errMs {
			_ = b.Err.RecordValue(v * 1e6)
			b.Errs[metrics.Rejected]++
		}
		return &metrics.Interval{Index: i, StartNs: int64(i) * 1e9, EndNs: int64(i+1) * 1e9, Ops: []metrics.OpStats{a, b}}
	}
	for i, iv := range []*metrics.Interval{
		interval(0, []int64{10, 10}, nil),
		interval(1, []int64{10, 30}, nil),
		interval(2, []int64{100, 100, 100}, []int64{1}),
		interval(3, []int64{200}, []int64{1, 1}),
		interval(4, []int64{400}, nil), // the drain: counts in the last phase
	} {
		if err := s.Interval(iv); err != nil {
			t.Fatalf("interval %d: %v", i, err)
		}
	}
	tx := s.result(results.BreakRule{ErrorPct: 1, MeanFactor: 5})
	near := func(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < want*0.01 }
	if len(tx.PerSecond) != 5 || tx.PerSecond[2].N != 4 || tx.PerSecond[2].Errors != 1 || !near(tx.PerSecond[2].MeanMs, 75.25) {
		t.Errorf("seconds %+v", tx.PerSecond)
	}
	p1, p2 := tx.Phases[0], tx.Phases[1]
	if p1.Phase != "2s@1/s" || p1.Requests != 4 || p1.Errors != 0 || !near(p1.MeanMs, 15) {
		t.Errorf("phase 1 %+v", p1)
	}
	if p2.FromS != 2 || p2.ToS != 4 || p2.Requests != 8 || p2.Errors != 3 || !near(p2.MeanMs, 903.0/8) || !near(p2.MaxMs, 400) {
		t.Errorf("phase 2 %+v", p2)
	}
	if b := tx.Break; b == nil || b.Index != 2 || b.FromS != 2 {
		t.Errorf("break %+v, want phase 2", b)
	}
	if tx.Rule == nil || tx.Rule.MeanFactor != 5 {
		t.Errorf("rule %+v", tx.Rule)
	}
	if none := newTxSink(nil).result(results.BreakRule{}); none.Phases != nil || none.Break != nil || none.Rule != nil {
		t.Errorf("a load without phases: %+v", none)
	}
}
