package ycsb

import "github.com/scalelab/scalelab/scenario"

var _ scenario.OneOpSessions = (*Workload)(nil)

// OneOpSessions reports true: YCSB's operations are independent requests,
// so one loop of the threads model (--loops) is one operation, as one
// YCSB operation is one request; ycsb.session_ops shapes the sessions of
// the phases model only.
func (w *Workload) OneOpSessions() bool { return true }
