package scenario

// OneOpSessions is an optional capability of a Workload whose sessions are
// endless streams of independent operations (ycsb, search): a load model
// that runs a set number of sessions per user (the threads model's
// --loops, JMeter's loop count) counts one operation as one session there,
// as one JMeter loop is one request. Without it (or when it returns
// false), a session is what Session.Next ends.
type OneOpSessions interface {
	OneOpSessions() bool
}

// LoopIsOneOp reports whether a loop of wl's sessions is one operation.
func LoopIsOneOp(wl Workload) bool {
	o, ok := wl.(OneOpSessions)
	return ok && o.OneOpSessions()
}
