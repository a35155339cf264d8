// Package load drives a scenario's sessions against an engine under a load
// model (closed, rate or phases), timing every operation from its intended
// start and recording it into the run's metrics collector.
package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/segment"
)

// Model is a load model: one small type per file, each validating its own
// configuration.
type Model interface {
	// Name is closed, rate or phases.
	Name() string
	// Validate checks the configuration and says what is wrong and allowed.
	Validate() error
	// Open reports whether the model is open (latency from the intended
	// start differs from service time, which is recorded beside it).
	Open() bool
	// Params describes the configuration for run.json.
	Params() map[string]any
	// prepare creates recorders before the clock starts.
	prepare(r *Run)
	// run drives the load until the run stops or the model's work is done.
	run(r *Run)
}

// DefaultDuration is the length of a run given neither a duration, an
// operation count nor phases, for every scenario.
const DefaultDuration = 10 * time.Second

// Options are the parts of a run common to every model.
type Options struct {
	Duration time.Duration // stop after this long; 0: until the ops or phases end
	Ops      int64         // total operations shared by all workers; 0: no limit
	Drain    time.Duration // at the stop, how long in-flight operations may finish (default 1s)
	Seed     uint64
	// Segment is the share of the test this process runs: the models
	// deal out users and workers, divide rates and the ops budget, and
	// stride session ids (package segment).
	Segment segment.Segment
}

// Run is one execution of a model over a workload.
type Run struct {
	wl    scenario.Workload
	coll  *metrics.Collector
	model Model
	opt   Options

	stopped atomic.Bool
	stopCh  chan struct{}
	stopMu  sync.Once
	opCtx   context.Context // cancelled when the drain ends
	ops     int64           // this segment's share of opt.Ops
	remain  atomic.Int64    // operations left when opt.Ops > 0
	wg      sync.WaitGroup
	reason  atomic.Value // string: why the run stopped
}

// NewRun validates the model and prepares its recorders.
func NewRun(wl scenario.Workload, coll *metrics.Collector, model Model, opt Options) (*Run, error) {
	if err := model.Validate(); err != nil {
		return nil, err
	}
	if opt.Duration < 0 || opt.Ops < 0 {
		return nil, fmt.Errorf("%w: --duration and --ops must not be negative", ErrBadSpec)
	}
	if opt.Drain <= 0 {
		opt.Drain = time.Second
	}
	r := &Run{wl: wl, coll: coll, model: model, opt: opt, stopCh: make(chan struct{})}
	r.ops = opt.Segment.Share(opt.Ops)
	r.remain.Store(r.ops)
	model.prepare(r)
	return r, nil
}

// Stop asks every worker to stop at its next operation boundary.
func (r *Run) Stop(reason string) {
	r.stopMu.Do(func() {
		r.reason.Store(reason)
		r.stopped.Store(true)
		close(r.stopCh)
	})
}

// StopReason says why the run stopped ("duration", "ops", "interrupted", ...).
func (r *Run) StopReason() string {
	s, _ := r.reason.Load().(string)
	return s
}

// cutByDrain reports whether err is the cancellation the drain gave an
// operation still running when it ended (an overloaded server's queue at
// the end of the phases): it has no outcome, so it is neither a
// completion nor an error but in flight at the stop, as an operation that
// does not return at all is.
func (r *Run) cutByDrain(err error) bool {
	return err != nil && r.opCtx.Err() != nil && errors.Is(err, context.Canceled)
}

// Claimed returns how many operations workers have claimed (for progress
// with --ops).
func (r *Run) Claimed() int64 { return r.ops - max(r.remain.Load(), 0) }

// Execute runs the load until the duration passes, the operations or
// phases are done, or ctx is cancelled; then it drains in-flight
// operations for at most Options.Drain and returns. The collector must
// have begun. It returns whether workers were still busy after the drain.
func (r *Run) Execute(ctx context.Context) (stuck bool) {
	opCtx, cancelOps := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelOps()
	r.opCtx = opCtx
	done := make(chan struct{})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.model.run(r)
	}()
	go func() { r.wg.Wait(); close(done) }()

	var timer <-chan time.Time
	if r.opt.Duration > 0 {
		// The duration counts from the collector's base, as the workers'
		// schedules do (see ended).
		t := time.NewTimer(r.opt.Duration - r.coll.Elapsed())
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-done:
		r.Stop("completed")
		return false
	case <-timer:
		r.Stop("duration")
	case <-ctx.Done():
		r.Stop("interrupted")
	}
	select {
	case <-done:
		return false
	case <-time.After(r.opt.Drain):
		cancelOps() // give stuck operations a cancelled context
		select {
		case <-done:
			return false
		case <-time.After(100 * time.Millisecond):
			return true
		}
	}
}

// newRecorders makes one recorder per worker.
func (r *Run) newRecorders(n int) []*metrics.Recorder {
	recs := make([]*metrics.Recorder, n)
	for i := range recs {
		recs[i] = r.coll.NewRecorder()
	}
	return recs
}

// startWorkers runs work(id) on n goroutines that the run waits for.
func (r *Run) startWorkers(n int, work func(id int)) {
	for i := 0; i < n; i++ {
		r.wg.Add(1)
		go func(id int) {
			defer r.wg.Done()
			work(id)
		}(i)
	}
}

// claim takes up to want operations from the shared budget. Workers claim
// small chunks so that none idles at the end while others still work: the
// chunk shrinks as the budget runs out.
func (r *Run) claim(workers int) int64 {
	if r.opt.Ops == 0 {
		return 1 << 30
	}
	left := r.remain.Load()
	if left <= 0 {
		return 0
	}
	chunk := left / int64(workers*8)
	chunk = min(max(chunk, 1), 256)
	n := r.remain.Add(-chunk)
	if n >= 0 {
		return chunk
	}
	if got := chunk + n; got > 0 {
		return got
	}
	return 0
}

// ended reports whether an operation intended at t (metrics.Now scale)
// falls at or after the end of the run's duration, and then waits for the
// stop: a worker starts no such operation. The stop timer of a busy
// machine fires late, and the overdue arrivals it would let through are
// not part of the schedule (2,000/s for 1 s is 2,000 arrivals, not the
// 2,300 a timer 150 ms late would give).
func (r *Run) ended(t int64) bool {
	if r.opt.Duration <= 0 || t < r.coll.Base()+int64(r.opt.Duration) {
		return false
	}
	<-r.stopCh
	return true
}

// sleepUntil waits until the monotonic time t (metrics.Now scale) or the
// stop, reporting false on stop. Short waits yield instead of sleeping,
// since a timer cannot wake that precisely.
func (r *Run) sleepUntil(t int64, timer **time.Timer) bool {
	for {
		d := time.Duration(t - metrics.Now())
		if d <= 0 {
			return !r.stopped.Load()
		}
		if d < 50*time.Microsecond {
			if r.stopped.Load() {
				return false
			}
			continue
		}
		if *timer == nil {
			*timer = time.NewTimer(d)
		} else {
			(*timer).Reset(d)
		}
		select {
		case <-(*timer).C:
		case <-r.stopCh:
			return false
		}
	}
}

// rng returns a deterministic random source for worker or session id.
func (r *Run) rng(id uint64) *rand.Rand {
	return rand.New(rand.NewPCG(r.opt.Seed, splitmix(id+0x9e3779b97f4a7c15)))
}

// sessionSeed derives a session's seed from the run seed and its id.
func (r *Run) sessionSeed(id uint64) uint64 { return splitmix(r.opt.Seed ^ splitmix(id)) }

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// thinkFor returns the think time before the operation sess just prepared.
func thinkFor(th scenario.Thinker, def Think, rng *rand.Rand) time.Duration {
	if th != nil {
		if d, ok := th.Think(); ok {
			return d
		}
	}
	return def.Next(rng)
}

// errNoUsers is returned by Validate of models that need workers.
var errNoUsers = errors.New("--users must be at least 1")
