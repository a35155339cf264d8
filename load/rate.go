package load

import (
	"fmt"
	"math"
	"time"

	"github.com/scalelab/scalelab/metrics"
)

// Rate is the open model at a constant rate: operations are scheduled at
// Rate per second (evenly spaced, or as a Poisson process) and spread over
// Workers, each of which runs its own share of the schedule. Latency is
// timed from the intended start, so a slow store cannot hide behind a
// waiting generator (no coordinated omission); service time is recorded
// beside it, and operations that start late are counted.
type Rate struct {
	Rate     float64 // operations per second
	Arrivals string  // constant or poisson
	Workers  int     // operations that may be in flight at once

	recs []*metrics.Recorder
}

var _ Model = (*Rate)(nil)

// Name returns "rate".
func (m *Rate) Name() string { return "rate" }

// Open reports true.
func (m *Rate) Open() bool { return true }

// Validate checks rate, arrivals and workers.
func (m *Rate) Validate() error {
	if !(m.Rate > 0) || m.Rate > 1e9 {
		return fmt.Errorf("%w: rate model: --rate must be above 0/s and at most 1e9/s (e.g. 5000/s)", ErrBadSpec)
	}
	if m.Arrivals != "constant" && m.Arrivals != "poisson" {
		return fmt.Errorf("%w: rate model: --arrivals %q; allowed: constant|poisson", ErrBadSpec, m.Arrivals)
	}
	if m.Workers < 1 || m.Workers > 100_000 {
		return fmt.Errorf("%w: rate model: --users %d (workers that may be in flight at once) must be in [1, 100000]", ErrBadSpec, m.Workers)
	}
	return nil
}

// Params describes the model for run.json.
func (m *Rate) Params() map[string]any {
	return map[string]any{"rate_per_s": m.Rate, "arrivals": m.Arrivals, "workers": m.Workers,
		"late_threshold_ms": float64(metrics.LateThresholdNs) / 1e6}
}

func (m *Rate) prepare(r *Run) {
	m.recs = r.newRecorders(int(r.opt.Segment.Share(int64(m.Workers))))
}

func (m *Rate) run(r *Run) { r.startWorkers(len(m.recs), func(id int) { m.worker(r, id) }) }

// worker runs every Workers-th arrival of the schedule: evenly spaced
// arrivals at Rate/Workers offset by id, or a Poisson process of rate
// Rate/Workers (the superposition of the workers' processes is a Poisson
// process of rate Rate).
func (m *Rate) worker(r *Run, id int) {
	rec := m.recs[id]
	// Worker id of this segment is worker seg.Global(id) of the whole
	// test: with constant arrivals the segments' schedules interleave into
	// the whole test's, each segment running rate/N.
	seg := r.opt.Segment
	global := seg.Global(uint64(id))
	workers := len(m.recs)
	rate := seg.Rate(m.Rate)
	rng := r.rng(global)
	base := r.coll.Base()
	ctx := r.opCtx
	sessID := global
	sess := r.wl.NewSession(sessID, r.sessionSeed(sessID))
	comp := newComposite(sess)
	period := float64(workers) / rate * 1e9 // ns between this worker's arrivals
	next := float64(global) / m.Rate * 1e9
	poisson := m.Arrivals == "poisson"
	if poisson {
		next = rng.ExpFloat64() * period
	}
	var timer *time.Timer
	var budget int64
	for !r.stopped.Load() {
		if budget == 0 {
			if budget = r.claim(workers); budget == 0 {
				return
			}
		}
		op, ok := sess.Next()
		if !ok {
			sessID += uint64(m.Workers)
			sess = r.wl.NewSession(sessID, r.sessionSeed(sessID))
			comp = newComposite(sess)
			continue
		}
		intended := base + int64(next)
		if r.ended(intended) {
			return
		}
		if !r.sleepUntil(intended, &timer) {
			return
		}
		start := metrics.Now()
		rec.RecordLag(op, start-intended)
		rec.Start(op)
		err := sess.Do(ctx)
		if r.cutByDrain(err) {
			return // in flight at the stop: the recorder keeps it started
		}
		end := metrics.Now()
		class := metrics.ClassOf(err)
		rec.Record(op, class, end-intended, end-start, end-base)
		comp.done(rec, intended, start, end, base, class)
		if err != nil {
			r.coll.NoteError(op, err)
		}
		if poisson {
			next += rng.ExpFloat64() * period
		} else {
			next += period
		}
		if next > math.MaxInt64/2 {
			return
		}
		budget--
	}
}
