package runner

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/setting"
)

// Settings of the break of a phases load.
const (
	KeyBreakErrors = "phases.break_errors"
	KeyBreakFactor = "phases.break_factor"
	// DefaultBreakFactor is how many times the first phase's mean
	// duration a phase's mean passes to break: under 5 a doubling of the
	// load on a busy but unsaturated server (and a shared machine's
	// noise) can pass it; past 5 a queue is building.
	DefaultBreakFactor = 5.0
)

// BreakSettings are the settings of a phases load's break, beside the
// engine's and the scenario's.
func BreakSettings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyBreakErrors, Kind: setting.Float, Default: "1", Min: 0, Max: 100,
			Description: "a phase of a phases load breaks when more than this per cent of its requests fail"},
		{Key: KeyBreakFactor, Kind: setting.Float, Default: fmt.Sprint(DefaultBreakFactor), Min: 1, Max: 1e6,
			Description: "a phase of a phases load breaks when its mean request duration passes this many times the first phase's"},
	}
}

// breakRule reads the break's settings.
func breakRule(set *setting.Set) results.BreakRule {
	return results.BreakRule{ErrorPct: set.Get(KeyBreakErrors).Float(), MeanFactor: set.Get(KeyBreakFactor).Float()}
}

// txSink gathers, from each closed interval, the requests that ended in
// it and their mean duration, all operations together, successes and
// failures (a 503 answered at once counts, as in Tsung's mean), and for a
// phases load each phase's requests, errors and histogram.
type txSink struct {
	seconds []results.TxSecond
	phases  []results.PhaseFigures
	hists   []*hdr.Histogram
	sums    []float64 // per phase: the sum of durations, ns
}

var _ metrics.Sink = (*txSink)(nil)

// newTxSink returns the sink; m is the phases model or nil.
func newTxSink(m *load.Phases) *txSink {
	s := &txSink{}
	if m != nil {
		for _, w := range phaseWindows(m) {
			s.phases = append(s.phases, results.PhaseFigures{Phase: w.Label, FromS: w.From, ToS: w.To})
			s.hists = append(s.hists, metrics.NewHist())
			s.sums = append(s.sums, 0)
		}
	}
	return s
}

// Interval adds one closed interval.
func (s *txSink) Interval(iv *metrics.Interval) error {
	var n, errs int64
	var sum float64
	mid := float64(iv.StartNs+iv.EndNs) / 2e9
	ph := -1
	if len(s.phases) > 0 && !iv.Warmup {
		ph = len(s.phases) - 1 // the drain after the last phase counts in it
		for i, p := range s.phases {
			if mid < p.ToS {
				ph = i
				break
			}
		}
	}
	for i := range iv.Ops {
		o := &iv.Ops[i]
		for _, h := range []*hdr.Histogram{o.Lat, o.Err} {
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			c := h.TotalCount()
			n += c
			sum += h.Mean() * float64(c)
			if ph >= 0 {
				s.hists[ph].Merge(h)
			}
		}
		errs += o.Errors()
	}
	sec := results.TxSecond{T: float64(iv.EndNs) / 1e9, N: n, Errors: errs, Warmup: iv.Warmup}
	if n > 0 {
		m := sum / float64(n) / 1e6
		sec.MeanMs = &m
	}
	s.seconds = append(s.seconds, sec)
	if ph >= 0 {
		p := &s.phases[ph]
		p.Requests += n
		p.Errors += errs
		s.sums[ph] += sum
	}
	return nil
}

// result is the run's figures, with the break by rule for a phases load.
func (s *txSink) result(rule results.BreakRule) *results.Transactions {
	t := &results.Transactions{PerSecond: s.seconds,
		Note: "every request that ended in each 1 s interval, of every operation, succeeded or failed, and their mean duration (Tsung's mean transaction duration); for a phases load the same per phase with percentiles, and the first phase that broke"}
	if len(s.phases) == 0 {
		return t
	}
	for i := range s.phases {
		p := &s.phases[i]
		if d := p.ToS - p.FromS; d > 0 {
			p.PerS = float64(p.Requests) / d
		}
		if p.Requests > 0 {
			p.ErrorPct = 100 * float64(p.Errors) / float64(p.Requests)
			m := s.sums[i] / float64(p.Requests) / 1e6
			p.MeanMs = &m
		}
		h := s.hists[i]
		p.P50Ms, p.P95Ms, p.P99Ms = metrics.PercentileMs(h, 50), metrics.PercentileMs(h, 95), metrics.PercentileMs(h, 99)
		if h.TotalCount() > 0 {
			mx := float64(h.Max()) / 1e6
			p.MaxMs = &mx
		}
	}
	t.Phases = s.phases
	t.Rule = &rule
	t.Break = results.FindBreak(t.Phases, rule)
	return t
}
