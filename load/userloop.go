package load

import (
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

// userLoop is one user of a model whose users run operations back to back
// (closed, threads): the next operation of its session, the think time
// before it, the end of the run, the operation timed from the previous
// one's end (or from the think time's end), its record and the composite
// it closes, then the same for the next; a session out of operations is
// followed by the user's next one.
type userLoop struct {
	r       *Run
	rec     *metrics.Recorder
	think   Think
	workers int               // the model's users in this segment (the claim's share)
	stride  uint64            // a user's next session ID is its last one's plus stride
	gauge   *metrics.InFlight // nil: operations in flight are not counted

	// sessionEnded, when set, is called when a session has no operation
	// left, before the user's next session starts; false ends the user.
	sessionEnded func() bool
	// opEnded, when set, is called after each recorded operation; false
	// ends the user.
	opEnded func() bool

	timer  *time.Timer
	budget int64 // operations claimed and not yet run
}

// sleepUntil waits until the monotonic time t or the stop, reporting false
// on stop, with the user's timer.
func (u *userLoop) sleepUntil(t int64) bool { return u.r.sleepUntil(t, &u.timer) }

// stopTimer releases the user's timer.
func (u *userLoop) stopTimer() {
	if u.timer != nil {
		u.timer.Stop()
	}
}

// run runs the sessions of user global (of the whole test) until the run
// stops or ends, the claimed operations run out or a hook ends the user.
func (u *userLoop) run(global uint64) {
	r, rec, g := u.r, u.rec, u.gauge
	rng := r.rng(global)
	base := r.coll.Base()
	ctx := r.opCtx
	sessID := global
	sess := r.wl.NewSession(sessID, r.sessionSeed(sessID))
	th, _ := scenario.SessionCapability[scenario.Thinker](sess)
	comp := newComposite(sess)
	last := metrics.Now()
	for !r.stopped.Load() {
		if u.budget == 0 {
			if u.budget = r.claim(u.workers); u.budget == 0 {
				return
			}
		}
		op, ok := sess.Next()
		if !ok {
			if u.sessionEnded != nil && !u.sessionEnded() {
				return
			}
			sessID += u.stride
			sess = r.wl.NewSession(sessID, r.sessionSeed(sessID))
			th, _ = scenario.SessionCapability[scenario.Thinker](sess)
			comp = newComposite(sess)
			continue
		}
		start := last
		if d := thinkFor(th, u.think, rng); d > 0 {
			if !u.sleepUntil(metrics.Now() + int64(d)) {
				return
			}
			start = metrics.Now()
		}
		if r.ended(start) {
			return
		}
		rec.Start(op)
		if g != nil {
			g.Begin(metrics.Now() - base)
		}
		err := sess.Do(ctx)
		if r.cutByDrain(err) {
			return // in flight at the stop: the recorder keeps it started
		}
		end := metrics.Now()
		if g != nil {
			g.End(end - base)
		}
		lat := end - start
		class := metrics.ClassOf(err)
		rec.Record(op, class, lat, lat, end-base)
		comp.done(rec, start, start, end, base, class)
		if err != nil {
			r.coll.NoteError(op, err)
		}
		last = end
		u.budget--
		if u.opEnded != nil && !u.opEnded() {
			return
		}
	}
}
