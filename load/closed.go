package load

import (
	"fmt"

	"github.com/scalelab/scalelab/metrics"
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
	u := userLoop{r: r, rec: c.recs[id], think: c.Think, workers: len(c.recs), stride: uint64(c.Users)}
	defer u.stopTimer()
	// User id of this segment is user seg.Global(id) of the whole test:
	// its choices and sessions are that user's.
	u.run(r.opt.Segment.Global(uint64(id)))
}
