package metrics

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Config configures a Collector.
type Config struct {
	Ops     []string      // operation names; an op's index is its id
	Open    bool          // open model: record service time and lag
	Samples bool          // keep raw samples
	Warmup  time.Duration // excluded from the totals
	Sinks   []Sink        // receive every interval as it closes
	// OnMeasure, if set, is called once when the measured window begins
	// (at Begin without a warm-up, else when the warm-up's last interval
	// closes), for snapshots such as CPU time that must match the window.
	OnMeasure func()
	// InFlight, if set, is the gauge of operations in flight that the load
	// model keeps; every interval then carries its figures (inflight.go).
	InFlight *InFlight
	// Composite names the operations made of other operations (a
	// session's whole visit): they are not in a run's total.
	Composite map[string]bool
}

// Sink receives closed intervals, in order, from the collector goroutine.
type Sink interface {
	Interval(iv *Interval) error
}

// OpStats is one operation's merged data for one interval.
type OpStats struct {
	Name string
	Lat  *hdr.Histogram // OK latencies (from intended start)
	Svc  *hdr.Histogram // OK service times (open models), else nil
	Err  *hdr.Histogram // latencies of failed operations
	Errs [NumClasses]int64
	Late int64
}

// Count returns the number of OK operations.
func (o *OpStats) Count() int64 { return o.Lat.TotalCount() }

// Errors returns the number of failed operations.
func (o *OpStats) Errors() int64 {
	var n int64
	for _, c := range o.Errs {
		n += c
	}
	return n
}

// Interval is every recorder's data for one closed interval, merged per
// operation. It is valid only during the Sink call.
type Interval struct {
	Index    int
	StartNs  int64 // since the run start
	EndNs    int64
	Warmup   bool // inside the warm-up: excluded from totals
	Ops      []OpStats
	Lag      *hdr.Histogram
	Sessions int64 // concurrent sessions at the end of the interval
	Samples  []Sample
	// InFlight is the operations in flight over the interval, when the
	// load model tracks them (Config.InFlight); nil otherwise.
	InFlight *InFlightFigures
}

// Collector owns the recorders of a run, closes an interval every second
// (and at the end of the warm-up), passes it to the sinks and adds the
// measured ones to the run's totals.
type Collector struct {
	cfg   Config
	start time.Time
	base  int64 // Now() at start

	mu        sync.Mutex // guards recs and pools
	recs      []*Recorder
	inflights []*atomic.Int64 // per op, for pooled recorders

	stopAt      atomic.Int64 // Now()-base when the load stopped; 0 while running
	errs        *errorSamples
	sessions    atomic.Int64
	maxSessions atomic.Int64

	cur      *Interval
	totals   []OpStats
	lagTotal *hdr.Histogram
	measured time.Duration
	lastEnd  int64
	index    int
	sinkErr  error

	inflightArea float64 // measured intervals: mean in flight x seconds
	inflightMax  int64
}

// NewCollector returns a collector; Begin starts the clock.
func NewCollector(cfg Config) *Collector {
	c := &Collector{cfg: cfg, lagTotal: NewHist(), errs: newErrorSamples(len(cfg.Ops))}
	c.totals = newOpStats(cfg.Ops, cfg.Open)
	c.cur = &Interval{Ops: newOpStats(cfg.Ops, cfg.Open), Lag: NewHist()}
	for range cfg.Ops {
		c.inflights = append(c.inflights, new(atomic.Int64))
	}
	return c
}

func newOpStats(names []string, open bool) []OpStats {
	ops := make([]OpStats, len(names))
	for i, n := range names {
		ops[i] = OpStats{Name: n, Lat: NewHist(), Err: NewHist()}
		if open {
			ops[i].Svc = NewHist()
		}
	}
	return ops
}

// NewRecorder returns a recorder owned by one worker.
func (c *Collector) NewRecorder() *Recorder {
	r := newRecorder(len(c.cfg.Ops), c.cfg.Open, c.cfg.Samples)
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
	return r
}

// NewPool returns a pool of n recorders shared by many goroutines.
func (c *Collector) NewPool(n int) *Pool {
	p := &Pool{}
	for i := 0; i < n; i++ {
		p.recs = append(p.recs, c.NewRecorder())
	}
	return p
}

// Begin starts the run clock. Nanosecond times passed to recorders are
// Now() minus Base().
func (c *Collector) Begin() {
	c.start = time.Now()
	c.base = Now()
	if c.cfg.Warmup <= 0 && c.cfg.OnMeasure != nil {
		c.cfg.OnMeasure()
	}
}

// Base returns the Now() reading at Begin.
func (c *Collector) Base() int64 { return c.base }

// StartTime returns the wall-clock time of Begin.
func (c *Collector) StartTime() time.Time { return c.start }

// Elapsed returns the time since Begin.
func (c *Collector) Elapsed() time.Duration { return time.Duration(Now() - c.base) }

// SessionStarted and SessionEnded count concurrent sessions.
func (c *Collector) SessionStarted() {
	n := c.sessions.Add(1)
	for {
		m := c.maxSessions.Load()
		if n <= m || c.maxSessions.CompareAndSwap(m, n) {
			return
		}
	}
}

// SessionEnded counts a session's end.
func (c *Collector) SessionEnded() { c.sessions.Add(-1) }

// MaxSessions returns the highest number of concurrent sessions seen.
func (c *Collector) MaxSessions() int64 { return c.maxSessions.Load() }

// OpStarted and OpEnded track in-flight operations of pooled recorders,
// whose users hold a recorder only while recording.
func (c *Collector) OpStarted(op int) { c.inflights[op].Add(1) }

// OpEnded is the counterpart of OpStarted.
func (c *Collector) OpEnded(op int) { c.inflights[op].Add(-1) }

// InFlight returns, per operation, how many operations have started but not
// finished.
func (c *Collector) InFlight() []int64 {
	out := make([]int64, len(c.cfg.Ops))
	for i, f := range c.inflights {
		out[i] = f.Load()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.recs {
		if op := r.inflight.Load(); op > 0 {
			out[op-1]++
		}
	}
	return out
}

// StopNow marks the end of the load: the last interval ends here even if
// the collector is still busy writing an earlier one when told to stop.
func (c *Collector) StopNow() { c.stopAt.Store(Now() - c.base) }

// Run closes intervals until stop is closed, then closes the last one.
// It returns the first sink error.
func (c *Collector) Run(stop <-chan struct{}) error {
	next := c.nextBoundary(0)
	t := time.NewTimer(time.Until(c.start.Add(next)))
	defer t.Stop()
	for {
		select {
		case <-stop:
			c.Flush()
			return c.sinkErr
		case <-t.C:
			c.Flush()
			next = c.nextBoundary(time.Duration(c.lastEnd))
			t.Reset(time.Until(c.start.Add(next)))
		}
	}
}

// nextBoundary returns the end of the interval starting at from: one second
// later, or the end of the warm-up if that comes first.
func (c *Collector) nextBoundary(from time.Duration) time.Duration {
	next := from.Truncate(time.Second) + time.Second
	if w := c.cfg.Warmup; from < w && w < next {
		return w
	}
	return next
}

// Flush closes the current interval now. Run calls it; callers use it
// only when not running Run.
func (c *Collector) Flush() {
	end := Now() - c.base
	if at := c.stopAt.Load(); at > 0 && at < end {
		end = max(at, c.lastEnd)
	}
	iv := c.cur
	iv.Index, iv.StartNs, iv.EndNs = c.index, c.lastEnd, end
	iv.Warmup = time.Duration(c.lastEnd) < c.cfg.Warmup
	iv.Sessions = c.sessions.Load()
	if g := c.cfg.InFlight; g != nil {
		mean, most := g.read(end)
		iv.InFlight = &InFlightFigures{Mean: mean, Max: most}
	}
	c.mu.Lock()
	recs := c.recs
	c.mu.Unlock()
	for _, r := range recs {
		got := r.swap()
		for i := range got.ops {
			o := &got.ops[i]
			dst := &iv.Ops[i]
			if o.lat != nil {
				dst.Lat.Merge(o.lat)
			}
			if o.svc != nil && dst.Svc != nil {
				dst.Svc.Merge(o.svc)
			}
			if o.err != nil {
				dst.Err.Merge(o.err)
			}
			for k, n := range o.errs {
				dst.Errs[k] += n
			}
			dst.Late += o.late
		}
		if got.lag != nil {
			iv.Lag.Merge(got.lag)
		}
		iv.Samples = append(iv.Samples, got.samples...)
		r.giveBack(got)
	}
	for _, s := range c.cfg.Sinks {
		if err := s.Interval(iv); err != nil && c.sinkErr == nil {
			c.sinkErr = fmt.Errorf("write interval %d: %w", iv.Index, err)
		}
	}
	if !iv.Warmup {
		c.measured += time.Duration(iv.EndNs - iv.StartNs)
		for i := range iv.Ops {
			addStats(&c.totals[i], &iv.Ops[i])
		}
		c.lagTotal.Merge(iv.Lag)
		if f := iv.InFlight; f != nil {
			c.inflightArea += f.Mean * float64(iv.EndNs-iv.StartNs) / 1e9
			c.inflightMax = max(c.inflightMax, f.Max)
		}
	}
	if iv.Warmup && time.Duration(end) >= c.cfg.Warmup && c.cfg.OnMeasure != nil {
		c.cfg.OnMeasure()
	}
	c.lastEnd = end
	c.index++
	c.resetCurrent()
}

func addStats(dst, src *OpStats) {
	dst.Lat.Merge(src.Lat)
	if dst.Svc != nil && src.Svc != nil {
		dst.Svc.Merge(src.Svc)
	}
	dst.Err.Merge(src.Err)
	for k, n := range src.Errs {
		dst.Errs[k] += n
	}
	dst.Late += src.Late
}

func (c *Collector) resetCurrent() {
	for i := range c.cur.Ops {
		o := &c.cur.Ops[i]
		o.Lat.Reset()
		if o.Svc != nil {
			o.Svc.Reset()
		}
		o.Err.Reset()
		o.Errs = [NumClasses]int64{}
		o.Late = 0
	}
	c.cur.Lag.Reset()
	c.cur.Samples = c.cur.Samples[:0]
}

// Totals returns the merged data of every measured (post-warm-up) interval
// and the length of the measured window. Call it after Run returns.
func (c *Collector) Totals() ([]OpStats, *hdr.Histogram, time.Duration) {
	return c.totals, c.lagTotal, c.measured
}

// InFlightGauge returns the gauge of Config.InFlight (nil without one).
func (c *Collector) InFlightGauge() *InFlight { return c.cfg.InFlight }

// InFlightTotals returns the mean number of operations in flight over the
// measured window and the most at once, when the load model tracks them
// (ok false otherwise). Call it after Run returns.
func (c *Collector) InFlightTotals() (mean float64, most int64, ok bool) {
	if c.cfg.InFlight == nil {
		return 0, 0, false
	}
	if c.measured > 0 {
		mean = c.inflightArea / c.measured.Seconds()
	}
	return mean, c.inflightMax, true
}

// InTotal reports whether operation name counts in a run's total (it is
// not made of other operations).
func (c *Collector) InTotal(name string) bool { return !c.cfg.Composite[name] }

// Intervals returns the number of intervals closed so far.
func (c *Collector) Intervals() int { return c.index }
