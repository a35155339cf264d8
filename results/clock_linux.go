package results

import "golang.org/x/sys/unix"

// ClockFacts reads the kernel's clock discipline (adjtimex, read-only):
// whether a time daemon keeps the clock synchronised and the estimated and
// maximum error it reports. Segments of a divided test start at one
// wall-clock instant, so their alignment is only as good as this.
func ClockFacts() Clock {
	var tx unix.Timex
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return Clock{Source: "adjtimex", Note: "the clock's state could not be read: " + err.Error()}
	}
	c := Clock{
		Source:     "adjtimex",
		EstErrorMs: float64(tx.Esterror) / 1000, // microseconds
		MaxErrorMs: float64(tx.Maxerror) / 1000,
	}
	c.Synchronised = state != unix.TIME_ERROR && tx.Status&unix.STA_UNSYNC == 0
	if !c.Synchronised {
		c.Note = "the clock is not synchronised by a time daemon (NTP, PTP): segments started on other hosts may be off by the clocks' difference"
	}
	return c
}
