package metrics

import (
	"sync/atomic"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// opInterval is one operation's data for one interval in one recorder.
type opInterval struct {
	lat  *hdr.Histogram // OK outcomes: latency from the intended start
	svc  *hdr.Histogram // OK outcomes: service time (open models only)
	err  *hdr.Histogram // failed outcomes: latency until the error
	errs [NumClasses]int64
	late int64 // started more than LateThreshold after the intended start
}

// interval is what a recorder gathers between two collector flips.
type interval struct {
	ops     []opInterval
	lag     *hdr.Histogram // scheduling lag: actual minus intended start
	samples []Sample
}

func (iv *interval) reset() {
	for i := range iv.ops {
		o := &iv.ops[i]
		if o.lat != nil {
			o.lat.Reset()
		}
		if o.svc != nil {
			o.svc.Reset()
		}
		if o.err != nil {
			o.err.Reset()
		}
		o.errs = [NumClasses]int64{}
		o.late = 0
	}
	if iv.lag != nil {
		iv.lag.Reset()
	}
	iv.samples = iv.samples[:0]
}

// Sample is one raw operation, kept only when samples are requested.
type Sample struct {
	EndNs     int64 // completion time since the run start
	Op        uint16
	Class     Class
	LatencyNs int64 // from the intended start
	ServiceNs int64 // from the actual start
}

// LateThresholdNs is how far behind its intended start an operation may
// begin before it is counted as late (the generator could not keep up).
// Timer wake-ups on a busy or virtual machine routinely lag by up to a
// millisecond or two; that jitter is in every latency anyway (it is timed
// from the intended start) and in the schedule-lag distribution, so only
// lags well past it count as falling behind.
const LateThresholdNs = int64(10_000_000)

// Recorder is one worker's recording slot. Exactly one goroutine records
// into a Recorder at a time (its owner, or whoever holds it from a Pool);
// the collector reads it concurrently through the phaser, so recording
// takes no lock.
type Recorder struct {
	ph      phaser
	active  atomic.Pointer[interval]
	spare   *interval // owned by the collector
	open    bool      // record service time beside latency
	samples bool

	// inflight is the operation in progress plus one, or 0; it is how
	// operations still running at the stop are counted.
	inflight atomic.Int32
	busy     atomic.Bool // held by a Pool user
}

func newRecorder(nops int, open, samples bool) *Recorder {
	r := &Recorder{open: open, samples: samples}
	r.active.Store(&interval{ops: make([]opInterval, nops)})
	r.spare = &interval{ops: make([]opInterval, nops)}
	return r
}

// Start marks op as in flight; call it just before the timed call.
func (r *Recorder) Start(op int) { r.inflight.Store(int32(op) + 1) }

// Record records one finished operation: its outcome class, latency from
// the intended start, and service time from the actual start (equal to the
// latency in the closed model). endNs is the completion time since the run
// start (used only for samples). It clears the in-flight mark.
func (r *Recorder) Record(op int, c Class, latencyNs, serviceNs, endNs int64) {
	e := r.ph.enter()
	iv := r.active.Load()
	o := &iv.ops[op]
	if c == OK {
		if o.lat == nil {
			o.lat = NewHist()
		}
		o.lat.RecordValue(clampNs(latencyNs)) //nolint:errcheck // clamped into range
		if r.open {
			if o.svc == nil {
				o.svc = NewHist()
			}
			o.svc.RecordValue(clampNs(serviceNs)) //nolint:errcheck // clamped into range
		}
	} else {
		if o.err == nil {
			o.err = NewHist()
		}
		o.err.RecordValue(clampNs(latencyNs)) //nolint:errcheck // clamped into range
		o.errs[c]++
	}
	if r.samples {
		iv.samples = append(iv.samples, Sample{EndNs: endNs, Op: uint16(op), Class: c, LatencyNs: latencyNs, ServiceNs: serviceNs})
	}
	r.ph.exit(e)
	r.inflight.Store(0)
}

// RecordLag records the scheduling lag of an operation (actual minus
// intended start) in open models, counting it late past LateThresholdNs.
func (r *Recorder) RecordLag(op int, lagNs int64) {
	e := r.ph.enter()
	iv := r.active.Load()
	if iv.lag == nil {
		iv.lag = NewHist()
	}
	iv.lag.RecordValue(clampNs(lagNs)) //nolint:errcheck // clamped into range
	if lagNs > LateThresholdNs {
		iv.ops[op].late++
	}
	r.ph.exit(e)
}

// swap hands the collector the interval recorded so far and gives writers
// a fresh one. The returned interval must be given back with giveBack.
func (r *Recorder) swap() *interval {
	fresh := r.spare
	old := r.active.Swap(fresh)
	r.ph.flip()
	r.spare = nil
	return old
}

func (r *Recorder) giveBack(iv *interval) {
	iv.reset()
	r.spare = iv
}
