package load

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
)

// ModelThreads is the name of JMeter's thread-group model.
const ModelThreads = results.ModelThreads

// Threads is JMeter's thread group: Users users started evenly over
// RampUp (user u of the whole test starts u*RampUp/Users after the load
// begins), each running Loops loops and then stopping; the run ends when
// the last user does. One loop is one session of the scenario, or one
// operation where sessions are endless streams of operations
// (scenario.OneOpSessions: ycsb, search), as one JMeter loop is one
// request. Loops 0 loops until --duration or --ops ends the run.
//
// Within a user, operations run back to back with the think time between
// them, timed as in the closed model. A user is not a request in flight
// (one not yet started, done, or between two requests has none), so the
// model counts its operations in flight over time (metrics.InFlight): the
// run's real concurrency, reported beside the active users.
type Threads struct {
	Users  int
	RampUp time.Duration
	Loops  int // per user; 0: until --duration or --ops
	Think  Think

	recs  []*metrics.Recorder
	gauge *metrics.InFlight
	share int64        // this segment's loops (its users x Loops)
	done  atomic.Int64 // loops finished
}

var _ Model = (*Threads)(nil)

// Limits of the threads model's configuration.
const (
	maxThreadsUsers = 1_000_000
	maxRampUp       = 24 * time.Hour
	maxLoops        = 1_000_000_000
)

// Name returns "threads".
func (m *Threads) Name() string { return ModelThreads }

// Open reports false: users run closed loops; the ramp schedules only
// their starts.
func (m *Threads) Open() bool { return false }

// InFlightTracker is an optional capability of a Model that counts its
// operations in flight through the collector's metrics.InFlight gauge
// (metrics.Config.InFlight), which the runner then creates.
type InFlightTracker interface {
	TracksInFlight() bool
}

// TracksInFlight reports whether m counts its operations in flight.
func TracksInFlight(m Model) bool {
	t, ok := m.(InFlightTracker)
	return ok && t.TracksInFlight()
}

// TracksInFlight reports true: the model counts its operations in flight.
func (m *Threads) TracksInFlight() bool { return true }

// Validate checks users, ramp-up and loops.
func (m *Threads) Validate() error {
	if m.Users < 1 || m.Users > maxThreadsUsers {
		return fmt.Errorf("%w: threads model: --users %d: %v and at most %d", ErrBadSpec, m.Users, errNoUsers, maxThreadsUsers)
	}
	if m.RampUp < 0 || m.RampUp > maxRampUp {
		return fmt.Errorf("%w: threads model: --ramp-up %s: allowed: 0 (every user at once) to %s", ErrBadSpec, m.RampUp, maxRampUp)
	}
	if m.Loops < 0 || m.Loops > maxLoops {
		return fmt.Errorf("%w: threads model: --loops %d: allowed: 1 to %d loops per user, or 0 to loop until --duration or --ops", ErrBadSpec, m.Loops, maxLoops)
	}
	return nil
}

// Params describes the model for run.json.
func (m *Threads) Params() map[string]any {
	p := map[string]any{"users": m.Users, "ramp_up": m.RampUp.String(), "loops": m.Loops, "think": m.Think.String()}
	if m.Users > 0 {
		p["start_every_ms"] = float64(m.RampUp) / float64(m.Users) / 1e6
	}
	return p
}

// StartOffset is when user u (0-based, of the whole test) starts, after
// the load begins: u*RampUp/Users, computed exactly.
func (m *Threads) StartOffset(u uint64) time.Duration {
	if m.RampUp <= 0 || u == 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(m.RampUp), u%uint64(m.Users))
	q, _ := bits.Div64(hi, lo, uint64(m.Users))
	return time.Duration(q)
}

// Bound says what ends a threads run: every user's loops ("when each of 50
// users has run 100 loops (5,000 loops)"), and opt's duration or
// operations when they may end it first.
func (m *Threads) Bound(opt Options) string {
	if m.Loops <= 0 {
		return Bound(opt)
	}
	s := fmt.Sprintf("when each of %s users has run %s loops (%s loops)", Count(int64(m.Users)), Count(int64(m.Loops)), Count(m.Total()))
	if opt.Duration > 0 || opt.Ops > 0 {
		s += ", or after " + Bound(opt) + ", whichever comes first"
	}
	return s
}

// Total is the number of loops of the whole test (Users x Loops), 0 when
// the users loop until the run ends.
func (m *Threads) Total() int64 { return int64(m.Users) * int64(m.Loops) }

func (m *Threads) prepare(r *Run) {
	m.recs = r.newRecorders(int(r.opt.Segment.Share(int64(m.Users))))
	m.gauge = r.coll.InFlightGauge()
	m.share = int64(len(m.recs)) * int64(m.Loops)
}

// LoopProgress returns the loops a run of the threads model has finished
// and the loops it runs in all (this segment's users x --loops); ok is
// false for other models and for users looping until the run ends.
func LoopProgress(r *Run) (done, total int64, ok bool) {
	m, isThreads := r.model.(*Threads)
	if !isThreads || m.Loops == 0 {
		return 0, 0, false
	}
	return m.done.Load(), m.share, true
}

func (m *Threads) run(r *Run) {
	oneOp := scenario.LoopIsOneOp(r.wl)
	r.startWorkers(len(m.recs), func(id int) { m.user(r, id, oneOp) })
}

// user runs user id of this segment: user seg.Global(id) of the whole
// test, with that user's start in the ramp, sessions and choices. A loop
// is one session, or one operation where sessions are endless (oneOp).
func (m *Threads) user(r *Run, id int, oneOp bool) {
	global := r.opt.Segment.Global(uint64(id))
	u := userLoop{r: r, rec: m.recs[id], think: m.Think, workers: len(m.recs), stride: uint64(m.Users), gauge: m.gauge}
	defer u.stopTimer()
	at := r.coll.Base() + int64(m.StartOffset(global))
	if r.ended(at) || !u.sleepUntil(at) {
		return
	}
	r.coll.SessionStarted()
	defer r.coll.SessionEnded()
	loops := 0
	loopEnded := func() bool {
		m.done.Add(1)
		loops++
		return m.Loops == 0 || loops < m.Loops
	}
	if oneOp {
		u.opEnded = loopEnded
	} else {
		u.sessionEnded = loopEnded
	}
	u.run(global)
	if u.budget > 0 && r.opt.Ops > 0 {
		r.remain.Add(u.budget) // done with loops to spare: others may take them
	}
}
