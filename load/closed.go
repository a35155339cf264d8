package load

import (
	"fmt"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

// Closed is the closed model: Users virtual users, each running sessions
// back to back, pausing Think between operations. With no think time the
// intended start of an operation is the completion of the previous one, so
// latency and service time coincide.
type Closed struct {
	Users int
	Think Think

	recs []*metrics.Recorder
}

var _ Model = (*Closed)(nil)

// Name returns "closed".
func (c *Closed) Name() string { return "closed" }

// Open reports false: the closed model has no schedule to fall behind.
func (c *Closed) Open() bool { return false }

// Validate checks the number of users.
func (c *Closed) Validate() error {
	if c.Users < 1 || c.Users > 1_000_000 {
		return fmt.Errorf("%w: closed model: --users %d: %v and at most 1000000", ErrBadSpec, c.Users, errNoUsers)
	}
	return nil
}

// Params describes the model for run.json.
func (c *Closed) Params() map[string]any {
	return map[string]any{"users": c.Users, "think": c.Think.String()}
}

func (c *Closed) prepare(r *Run) { c.recs = r.newRecorders(int(r.opt.Segment.Share(int64(c.Users)))) }

func (c *Closed) run(r *Run) {
	r.startWorkers(len(c.recs), func(id int) {
		r.coll.SessionStarted()
		defer r.coll.SessionEnded()
		c.user(r, id)
	})
}

func (c *Closed) user(r *Run, id int) {
	rec := c.recs[id]
	// User id of this segment is user seg.Global(id) of the whole test:
	// its choices and sessions are that user's.
	global := r.opt.Segment.Global(uint64(id))
	rng := r.rng(global)
	base := r.coll.Base()
	ctx := r.opCtx
	sessID := global
	sess := r.wl.NewSession(sessID, r.sessionSeed(sessID))
	th, _ := sess.(scenario.Thinker)
	comp := newComposite(sess)
	var timer *time.Timer
	var budget int64
	last := metrics.Now()
	for !r.stopped.Load() {
		if budget == 0 {
			if budget = r.claim(len(c.recs)); budget == 0 {
				return
			}
		}
		op, ok := sess.Next()
		if !ok {
			sessID += uint64(c.Users)
			sess = r.wl.NewSession(sessID, r.sessionSeed(sessID))
			th, _ = sess.(scenario.Thinker)
			comp = newComposite(sess)
			continue
		}
		start := last
		if d := thinkFor(th, c.Think, rng); d > 0 {
			if !r.sleepUntil(metrics.Now()+int64(d), &timer) {
				return
			}
			start = metrics.Now()
		}
		if r.ended(start) {
			return
		}
		rec.Start(op)
		err := sess.Do(ctx)
		if r.cutByDrain(err) {
			return // in flight at the stop: the recorder keeps it started
		}
		end := metrics.Now()
		lat := end - start
		class := metrics.ClassOf(err)
		rec.Record(op, class, lat, lat, end-base)
		comp.done(rec, start, start, end, base, class)
		if err != nil {
			r.coll.NoteError(op, err)
		}
		last = end
		budget--
	}
}
