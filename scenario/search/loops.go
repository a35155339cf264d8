package search

import "github.com/scalelab/scalelab/scenario"

var _ scenario.OneOpSessions = (*Workload)(nil)

// OneOpSessions reports true: a user's session is an endless stream of
// searches, so one JMeter loop (the threads model's --loops) is one
// request, as in the study.
func (w *Workload) OneOpSessions() bool { return true }
