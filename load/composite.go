package load

import (
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

// composite follows one session's open composite operation
// (scenario.Composer): the intended and actual start of the operation that
// opened it and the first failure within it.
type composite struct {
	c        scenario.Composer // nil: the session has none
	open     bool
	intended int64
	start    int64
	class    metrics.Class
}

// newComposite starts following sess (a new session: nothing is open).
func newComposite(sess scenario.Session) composite {
	c, _ := scenario.SessionCapability[scenario.Composer](sess)
	return composite{c: c}
}

// done is called after the session's operation was recorded, with its
// intended and actual start, its end and its class; it records the
// composite into rec when the operation closes one.
func (c *composite) done(rec *metrics.Recorder, intended, start, end, base int64, class metrics.Class) {
	if c.c == nil {
		return
	}
	op, step := c.c.Composite()
	switch step {
	case scenario.Begin, scenario.Whole:
		c.open, c.intended, c.start, c.class = true, intended, start, class
	case scenario.Within, scenario.End:
		if !c.open {
			return
		}
		if c.class == metrics.OK {
			c.class = class
		}
	default:
		return
	}
	if step == scenario.End || step == scenario.Whole {
		rec.Record(op, c.class, end-c.intended, end-c.start, end-base)
		c.open = false
	}
}
