package report

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// synth describes a synthetic results directory, written with the same
// sinks a real run uses (metrics.HlogSink and metrics.SeriesSink).
type synth struct {
	intervals int      // 1-second intervals
	ops       []string // operation names
	perOp     int      // operations per interval and operation
	errEvery  int      // one error per errEvery operations (0: none)
	open      bool     // record service times
	warmup    int      // warm-up intervals
	status    string   // run.json status
}

// write creates dir (where it is missing) and its run.json, intervals.hlog
// and series.csv, and returns the document and the exact totals of the
// measured window per operation.
func (s synth) write(tb testing.TB, dir string) (*results.Run, map[string]*metrics.OpStats) {
	tb.Helper()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	totals := map[string]*metrics.OpStats{}
	for _, op := range s.ops {
		totals[op] = &metrics.OpStats{Name: op, Lat: metrics.NewHist(), Err: metrics.NewHist()}
		if s.open {
			totals[op].Svc = metrics.NewHist()
		}
	}
	iv := &metrics.Interval{}
	for _, op := range s.ops {
		o := metrics.OpStats{Name: op, Lat: metrics.NewHist(), Err: metrics.NewHist()}
		if s.open {
			o.Svc = metrics.NewHist()
		}
		iv.Ops = append(iv.Ops, o)
	}
	resultstest.WriteIntervals(tb, dir, start, s.intervals, func(i int) *metrics.Interval {
		iv.Index, iv.StartNs, iv.EndNs = i, int64(i)*1e9, int64(i+1)*1e9
		iv.Warmup = i < s.warmup
		iv.Sessions = int64(10 + i%7)
		for k := range iv.Ops {
			o := &iv.Ops[k]
			o.Lat.Reset()
			o.Err.Reset()
			o.Errs = [metrics.NumClasses]int64{}
			o.Late = 0
			if o.Svc != nil {
				o.Svc.Reset()
			}
			// a slow patch in the middle of the run
			scale := 1.0
			if i > s.intervals/2 && i < s.intervals/2+5 {
				scale = 20
			}
			t := totals[o.Name]
			if iv.Warmup {
				t = &metrics.OpStats{Lat: metrics.NewHist(), Err: metrics.NewHist(), Svc: metrics.NewHist()} // discarded
			}
			for j := 0; j < s.perOp; j++ {
				svc := int64(math.Exp(rng.NormFloat64()*0.6) * 8e5 * scale * float64(k+1))
				lat := svc + int64(rng.ExpFloat64()*1e5)
				if s.errEvery > 0 && j%s.errEvery == 0 {
					_ = o.Err.RecordValue(lat)
					_ = t.Err.RecordValue(lat)
					o.Errs[metrics.Timeout]++
					t.Errs[metrics.Timeout]++
					continue
				}
				_ = o.Lat.RecordValue(lat)
				_ = t.Lat.RecordValue(lat)
				if o.Svc != nil {
					_ = o.Svc.RecordValue(svc)
					_ = t.Svc.RecordValue(svc)
				}
				if lat-svc > metrics.LateThresholdNs {
					o.Late++
					t.Late++
				}
			}
		}
		return iv
	})
	model := "closed"
	if s.open {
		model = "rate"
	}
	status := s.status
	if status == "" {
		status = results.StatusOK
	}
	r := &results.Run{Status: status, Scenario: "synthetic", Engine: "memory", Start: start,
		Settings: map[string]string{"memory.latency": "0s"}, Changed: []string{},
		Load:    results.Load{Model: model, Params: map[string]any{"users": 8}, DurationS: float64(s.intervals), WarmupS: float64(s.warmup), Seed: 1},
		Summary: map[string]metrics.OpSummary{}, Files: []string{results.RunFile, results.HlogFile, results.SeriesFile}}
	if status != results.StatusRunning {
		measured := time.Duration(s.intervals-s.warmup) * time.Second
		var stats []metrics.OpStats
		for _, op := range s.ops {
			stats = append(stats, *totals[op])
		}
		for _, sum := range metrics.Summarize(stats, measured, nil) {
			r.Summary[sum.Op] = sum
		}
		r.Totals = results.Sum(r.Summary)
		r.MeasuredS = measured.Seconds()
		r.Intervals = s.intervals
	}
	resultstest.Write(tb, dir, r)
	return r, totals
}
