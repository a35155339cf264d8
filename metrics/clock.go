package metrics

import (
	_ "unsafe" // for go:linkname
)

// Now returns a monotonic clock reading in nanoseconds. It is the runtime's
// own monotonic clock, half the cost of time.Now (which also reads the wall
// clock), and is what every latency in scalelab is measured with.
//
//go:linkname Now runtime.nanotime
func Now() int64
