package scenario

// A wrapper of a workload (the runner's audit, which logs the writes of
// its sessions) implements Unwrap() Workload, and a wrapper of a session
// Unwrap() Session, as errors and net/http's wrappers do: the optional
// capabilities of what they wrap (Checker, Reporter, Thinker, Composer,
// ...) are found through them with Capability and SessionCapability
// instead of being forwarded by hand, so a new capability needs no edit
// of any wrapper.

// Capability returns w's capability T, or that of the first workload
// under it (following Unwrap) that has it.
func Capability[T any](w Workload) (T, bool) {
	for w != nil {
		if t, ok := w.(T); ok {
			return t, true
		}
		u, ok := w.(interface{ Unwrap() Workload })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	var zero T
	return zero, false
}

// SessionCapability returns s's capability T, or that of the first
// session under it (following Unwrap) that has it.
func SessionCapability[T any](s Session) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		u, ok := s.(interface{ Unwrap() Session })
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	var zero T
	return zero, false
}
