//go:build !linux

package results

// ClockFacts is unknown off Linux.
func ClockFacts() Clock {
	return Clock{Source: "none", Note: "the clock's synchronisation state is not read on this system"}
}
