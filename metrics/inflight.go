package metrics

import (
	"bytes"
	"strconv"
	"sync/atomic"
)

// InFlight counts the operations in flight and integrates that count over
// time, so that the collector can report, per interval, the mean number of
// operations in flight (exact: the time integral of the count divided by
// the interval's length, not a sample) and the most at once. A load model
// that tracks its real concurrency calls Begin just before an operation
// and End when it returns; the collector reads it at every interval's end.
//
// The integral up to T is the sum over operations of the time each spent
// in flight before T: sum(end) + n(T)*T - sum(start), with the sums over
// ended and started operations. Three counters give it without a lock;
// they wrap in 64 bits, which the difference survives.
type InFlight struct {
	n        atomic.Int64
	startSum atomic.Int64 // start times (ns since the run start), wrapping
	endSum   atomic.Int64 // end times, wrapping
	peak     atomic.Int64 // the most in flight since the last read

	// read by the collector goroutine only
	lastT    int64
	lastArea int64
}

// NewInFlight returns a gauge with nothing in flight.
func NewInFlight() *InFlight { return &InFlight{} }

// Begin counts an operation starting at t (ns since the run start).
func (g *InFlight) Begin(t int64) {
	g.startSum.Add(t)
	n := g.n.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// End counts the end at t of an operation counted by Begin.
func (g *InFlight) End(t int64) {
	g.endSum.Add(t)
	g.n.Add(-1)
}

// Now returns how many operations are in flight.
func (g *InFlight) Now() int64 { return g.n.Load() }

// read returns the mean in flight over (last read, t] and the most in
// flight at once in it, and starts the next stretch at t.
func (g *InFlight) read(t int64) (mean float64, most int64) {
	n := g.n.Load()
	area := g.endSum.Load() + n*t - g.startSum.Load()
	most = g.peak.Swap(n)
	if d := t - g.lastT; d > 0 {
		mean = max(float64(area-g.lastArea)/float64(d), 0)
	}
	g.lastT, g.lastArea = t, area
	return mean, max(most, n)
}

// InFlightFigures is one interval's concurrency: the mean number of
// operations in flight over it and the most at once.
type InFlightFigures struct {
	Mean float64
	Max  int64
}

// concurrencyHeader is the header line of concurrency.csv.
const concurrencyHeader = "t_s,interval_s,in_flight_mean,in_flight_max,users,warmup\n"

// ConcurrencySink writes concurrency.csv: per interval, the mean number of
// operations in flight, the most at once and the users (sessions) active
// at its end. Only runs whose load model tracks its operations in flight
// (Config.InFlight) have rows.
type ConcurrencySink struct{ s *stream }

// NewConcurrencySink creates path and writes the header.
func NewConcurrencySink(path string) (*ConcurrencySink, error) {
	s, err := createCSV(path, concurrencyHeader)
	if err != nil {
		return nil, err
	}
	return &ConcurrencySink{s: s}, nil
}

// Interval writes iv's row.
func (cs *ConcurrencySink) Interval(iv *Interval) error {
	if iv.InFlight == nil {
		return nil
	}
	FormatConcurrencyRow(&cs.s.buf, float64(iv.EndNs)/1e9, float64(iv.EndNs-iv.StartNs)/1e9, iv.InFlight.Mean, iv.InFlight.Max, iv.Sessions, iv.Warmup)
	return cs.s.commit()
}

// Close flushes and closes the file.
func (cs *ConcurrencySink) Close() error { return cs.s.Close() }

// ConcurrencyHeader is the header line of concurrency.csv.
func ConcurrencyHeader() string { return concurrencyHeader }

// FormatConcurrencyRow appends one concurrency.csv row.
func FormatConcurrencyRow(b *bytes.Buffer, tS, intervalS, mean float64, most, users int64, warmup bool) {
	line := strconv.FormatFloat(tS, 'f', 3, 64) + "," + strconv.FormatFloat(intervalS, 'f', 3, 64) + "," +
		strconv.FormatFloat(mean, 'f', 3, 64) + "," + strconv.FormatInt(most, 10) + "," + strconv.FormatInt(users, 10) + "," +
		strconv.FormatBool(warmup) + "\n"
	b.WriteString(line)
}
