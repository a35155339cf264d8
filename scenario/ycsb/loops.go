package ycsb

import "github.com/scalelab/scalelab/scenario"

var _ scenario.OneOpSessions = (*Workload)(nil)

// OneOpSessions reports whether sessions are endless (ycsb.session_ops=0,
// the default): then one loop of the threads model (--loops) is one
// operation, as one YCSB operation is one request.
func (w *Workload) OneOpSessions() bool { return w.cfg.sessionOps == 0 }
