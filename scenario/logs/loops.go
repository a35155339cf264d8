package logs

import "github.com/scalelab/scalelab/scenario"

var _ scenario.OneOpSessions = (*Workload)(nil)

// OneOpSessions reports whether sessions are endless (logs.session_ops=0):
// then one loop of the threads model (--loops) is one operation.
func (w *Workload) OneOpSessions() bool { return w.cfg.sessionOps == 0 }
