package kit

import "github.com/scalelab/scalelab/setting"

// SessionOpsSpec declares key as a scenario's session_ops setting: the
// operations per session (phases model), 10 unless set; 0 never ends a
// session.
func SessionOpsSpec(key string) setting.Spec {
	return setting.Spec{Key: key, Kind: setting.Int, Default: "10", Min: 0, Max: 1e15,
		Description: "operations per session, after which it ends (phases model); 0 never ends"}
}

// SessionOps counts a session's operations against its session_ops
// setting. Its zero value, like a limit of 0, never ends the session.
type SessionOps struct{ limit, done uint64 }

// NewSessionOps returns a count that ends the session after limit
// operations (0: never).
func NewSessionOps(limit uint64) SessionOps { return SessionOps{limit: limit} }

// Take counts one more operation; it returns false, counting nothing, once
// the session has done its limit.
func (o *SessionOps) Take() bool {
	if o.limit > 0 {
		if o.done >= o.limit {
			return false
		}
		o.done++
	}
	return true
}
