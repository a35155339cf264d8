package load

import (
	"fmt"
	"runtime"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

// Phases is the open session model of Tsung: in each phase, new sessions
// arrive at the phase's rate (exponential inter-arrival times); each session
// runs closed-loop through the scenario's session with its think times.
// Concurrent sessions are counted. An operation's intended start is the
// previous operation's end plus the think time, so a late wake-up shows in
// its latency; the lag is recorded too.
type Phases struct {
	Phases []Phase
	Think  Think

	pool *metrics.Pool
}

var _ Model = (*Phases)(nil)

// Name returns "phases".
func (m *Phases) Name() string { return "phases" }

// Open reports true.
func (m *Phases) Open() bool { return true }

// Validate checks that there is at least one phase.
func (m *Phases) Validate() error {
	if len(m.Phases) == 0 {
		return fmt.Errorf("%w: phases model: no phases; use --phases 30s@1/s,30s@2/s", ErrBadSpec)
	}
	for i, p := range m.Phases {
		if p.Duration <= 0 || !(p.Rate > 0) || p.Rate > maxSessionRate {
			return fmt.Errorf("%w: phases model: phase %d (%s): duration must be positive and the rate in (0, 1e7] sessions/s", ErrBadSpec, i+1, p)
		}
	}
	return nil
}

// Total returns the sum of the phase durations.
func (m *Phases) Total() time.Duration {
	var t time.Duration
	for _, p := range m.Phases {
		t += p.Duration
	}
	return t
}

// Params describes the model for run.json.
func (m *Phases) Params() map[string]any {
	ps := make([]string, len(m.Phases))
	for i, p := range m.Phases {
		ps[i] = p.String()
	}
	return map[string]any{"phases": ps, "think": m.Think.String(), "arrivals": "poisson"}
}

// prepare makes the recorder pool: only GOMAXPROCS goroutines record at
// once, so a few recorders per processor keep takers from colliding while
// keeping the per-second merge (and the histograms' memory) small.
func (m *Phases) prepare(r *Run) {
	m.pool = r.coll.NewPool(4 * runtime.GOMAXPROCS(0))
}

// run launches sessions phase by phase, then waits for them to finish (or
// for the stop).
func (m *Phases) run(r *Run) {
	// A segment's arrivals are an independent Poisson stream of rate/N
	// (its own generator), and its k-th session is the whole test's
	// session seg.Global(k).
	seg := r.opt.Segment
	rng := r.rng(1<<62 + uint64(seg.Index))
	var timer *time.Timer
	start := r.coll.Base()
	var at float64 // ns since start of the next arrival
	var phaseStart float64
	var id uint64
	for _, p := range m.Phases {
		phaseEnd := phaseStart + float64(p.Duration)
		mean := 1e9 / seg.Rate(p.Rate)
		if at < phaseStart {
			at = phaseStart
		}
		at += rng.ExpFloat64() * mean
		for at < phaseEnd {
			if r.ended(start + int64(at)) {
				return
			}
			if !r.sleepUntil(start+int64(at), &timer) {
				return
			}
			r.wg.Add(1)
			go m.session(r, seg.Global(id))
			id++
			at += rng.ExpFloat64() * mean
		}
		phaseStart = phaseEnd
	}
}

func (m *Phases) session(r *Run, id uint64) {
	defer r.wg.Done()
	r.coll.SessionStarted()
	defer r.coll.SessionEnded()
	sess := r.wl.NewSession(id, r.sessionSeed(id))
	th, _ := sess.(scenario.Thinker)
	comp := newComposite(sess)
	rng := r.rng(id)
	base := r.coll.Base()
	hint := uint32(id)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	last := metrics.Now()
	for !r.stopped.Load() {
		op, ok := sess.Next()
		if !ok {
			return
		}
		intended := last + int64(thinkFor(th, m.Think, rng))
		if r.ended(intended) {
			return
		}
		if !r.sleepUntil(intended, &timer) {
			return
		}
		start := metrics.Now()
		r.coll.OpStarted(op)
		err := sess.Do(r.opCtx)
		if r.cutByDrain(err) {
			return // in flight at the stop: never ended in the collector
		}
		end := metrics.Now()
		rec := m.pool.Get(hint)
		rec.RecordLag(op, start-intended)
		class := metrics.ClassOf(err)
		rec.Record(op, class, end-intended, end-start, end-base)
		comp.done(rec, intended, start, end, base, class)
		m.pool.Put(rec)
		if err != nil {
			r.coll.NoteError(op, err)
		}
		r.coll.OpEnded(op)
		last = end
	}
}
