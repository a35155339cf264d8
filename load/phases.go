package load

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/segment"
)

// Phases is the open session model of Tsung: in each phase, new sessions
// arrive at the phase's rate (exponential inter-arrival times); each session
// runs closed-loop through the scenario's session with its think times.
// Concurrent sessions are counted. An operation's intended start is the
// previous operation's end plus the think time, so a late wake-up shows in
// its latency; the lag is recorded too.
type Phases struct {
	Phases []Phase
	Think  Think

	pool  *metrics.Pool
	queue Queue
}

// Queue is what a scenario.Limited workload's bound did in a run: at most
// Slots operations ran at once (InProcess: statements of a store in this
// process, Slots lowered to leave the generator a processor), and at most
// MaxWaiting waited for a slot.
type Queue struct {
	Slots      int
	InProcess  bool
	MaxWaiting int
}

// Queue returns what the bound did in the last run; Slots 0: no bound.
func (m *Phases) Queue() Queue { return m.queue }

var _ Model = (*Phases)(nil)

// Name returns "phases".
func (m *Phases) Name() string { return "phases" }

// Open reports true.
func (m *Phases) Open() bool { return true }

// Validate checks that there is at least one phase.
func (m *Phases) Validate() error {
	if len(m.Phases) == 0 {
		return fmt.Errorf("%w: phases model: no phases; use --phases 30s@1/s,30s@2/s", ErrBadSpec)
	}
	for i, p := range m.Phases {
		if p.Duration <= 0 || !(p.Rate > 0) || p.Rate > maxSessionRate {
			return fmt.Errorf("%w: phases model: phase %d (%s): duration must be positive and the rate in (0, 1e7] sessions/s", ErrBadSpec, i+1, p)
		}
	}
	return nil
}

// Total returns the sum of the phase durations.
func (m *Phases) Total() time.Duration {
	var t time.Duration
	for _, p := range m.Phases {
		t += p.Duration
	}
	return t
}

// Params describes the model for run.json.
func (m *Phases) Params() map[string]any {
	ps := make([]string, len(m.Phases))
	for i, p := range m.Phases {
		ps[i] = p.String()
	}
	return map[string]any{"phases": ps, "think": m.Think.String(), "arrivals": "poisson"}
}

// prepare makes the recorder pool: only GOMAXPROCS goroutines record at
// once, so a few recorders per processor keep takers from colliding while
// keeping the per-second merge (and the histograms' memory) small.
func (m *Phases) prepare(r *Run) {
	m.pool = r.coll.NewPool(4 * runtime.GOMAXPROCS(0))
}

// run schedules the arrivals phase by phase and every session's operations
// on a Scheduler: a session waiting for its next operation is an entry in
// a heap, not a goroutine (docs/load-models.md says what one costs). It
// returns once the stop has come and the running operations have ended,
// or when the arrivals are over and every session has ended.
func (m *Phases) run(r *Run) {
	// A segment's arrivals are an independent Poisson stream of rate/N
	// (its own generator), and its k-th session is the whole test's
	// session seg.Global(k).
	seg := r.opt.Segment
	a := &arrivals{rng: r.rng(1<<62 + uint64(seg.Index)), seg: seg, start: r.coll.Base()}
	var horizon int64
	if r.opt.Duration > 0 {
		horizon = r.coll.Base() + int64(r.opt.Duration)
	}
	p := &phasesRun{m: m, r: r, a: a, done: make(chan struct{}), quit: make(chan struct{})}
	m.queue = Queue{}
	defer p.limit()()
	p.alive.Store(1) // the arrivals
	p.sched = NewScheduler(0, horizon, p.quit, p.step)
	go func() {
		select {
		case <-r.stopCh:
		case <-p.done:
		}
		close(p.quit)
	}()
	p.sched.Start()
	if due, ok := a.next(m.Phases); ok {
		p.sched.At(0, due, nil)
	} else {
		p.end()
	}
	p.sched.Wait()
	// Sessions still thinking (or cut by the drain) at the stop end with it.
	for range p.live.Load() {
		r.coll.SessionEnded()
	}
}

// limit sets the gate of a scenario.Limited workload and returns what
// undoes it. Statements of a store in this process run on the
// generator's processors, and one blocked in a file system call holds
// its processor: with such a store at most processors-1 operations run
// at once (at least one), and the runtime gets one processor more than
// it had, so that the sessions' wake-ups always find one.
func (p *phasesRun) limit() (undo func()) {
	l, ok := scenario.Capability[scenario.Limited](p.r.wl)
	if !ok {
		return func() {}
	}
	n, inProcess := l.Inflight()
	release := func() {}
	if inProcess && n > 0 {
		var procs int
		procs, release = extraProcessor()
		n = min(n, max(1, procs-1))
	}
	p.gate = newGate[gated](n)
	return func() {
		release()
		if p.gate != nil {
			slots, _, most := p.gate.stats()
			p.m.queue = Queue{Slots: slots, InProcess: inProcess, MaxWaiting: most}
		}
	}
}

// extra counts the runs in this process that hold one processor more
// than base, the count before the first of them.
var extra struct {
	sync.Mutex
	runs, base int
}

// extraProcessor gives the runtime one processor more than it had before
// any run held one, and returns that count and what gives it back (the
// last run to release restores it): runs side by side in one process
// (tests, experiments) share the one extra processor.
func extraProcessor() (procs int, release func()) {
	extra.Lock()
	defer extra.Unlock()
	if extra.runs == 0 {
		extra.base = runtime.GOMAXPROCS(0)
		runtime.GOMAXPROCS(extra.base + 1)
	}
	extra.runs++
	var once sync.Once
	return extra.base, func() {
		once.Do(func() {
			extra.Lock()
			defer extra.Unlock()
			if extra.runs--; extra.runs == 0 {
				runtime.GOMAXPROCS(extra.base)
			}
		})
	}
}

// phasesRun is one execution of the phases model.
type phasesRun struct {
	m     *Phases
	r     *Run
	a     *arrivals
	sched *Scheduler[*phSession]
	gate  *gate[gated] // nil unless the workload is scenario.Limited
	alive atomic.Int64 // sessions alive, plus one while arrivals remain
	live  atomic.Int64 // sessions started and not ended
	done  chan struct{}
	quit  chan struct{}
}

// phSession is a session between its operations: what the scheduler
// holds for each of the run's (up to millions of) concurrent sessions.
type phSession struct {
	sess scenario.Session
	th   scenario.Thinker
	id   uint64
	last int64      // when its previous operation ended (its arrival at first)
	op   int        // the operation Next prepared
	comp *composite // its open composite operation; nil when the session has none
	pcg  rand.PCG
	rng  rand.Rand
}

// arrivals is the Poisson arrival process across the phases.
type arrivals struct {
	rng        *rand.Rand
	seg        segment.Segment
	start      int64   // metrics.Now at the run's start
	phase      int     // index of the current phase
	phaseStart float64 // ns since start
	at         float64 // ns since start of the next arrival; 0 before the first draw
	drawn      bool
	id         uint64
}

// next draws the next arrival time (metrics.Now scale), or false when the
// phases are over.
func (a *arrivals) next(phases []Phase) (int64, bool) {
	for a.phase < len(phases) {
		p := phases[a.phase]
		phaseEnd := a.phaseStart + float64(p.Duration)
		if a.at < a.phaseStart {
			a.at = a.phaseStart
		}
		if !a.drawn {
			a.at += a.rng.ExpFloat64() * (1e9 / a.seg.Rate(p.Rate))
			a.drawn = true
		}
		if a.at < phaseEnd {
			return a.start + int64(a.at), true
		}
		a.phase++
		a.phaseStart = phaseEnd
		a.drawn = false
	}
	return 0, false
}

// end counts a session's end (or the arrivals'); the last one ends the
// run.
func (p *phasesRun) end() {
	if p.alive.Add(-1) == 0 {
		close(p.done)
	}
}

// step runs one job at its due time: the arrivals (a nil session), or a
// session's prepared operation.
func (p *phasesRun) step(s *phSession, due int64) {
	if s == nil {
		p.arrive(due)
		return
	}
	r := p.r
	if r.stopped.Load() {
		return
	}
	start := metrics.Now()
	r.coll.OpStarted(s.op)
	op := gated{s: s, due: due, start: start, begin: start}
	if p.gate != nil && !p.gate.enter(op) {
		return // waits for a slot: the runner that frees one runs it
	}
	for {
		p.exec(op)
		if p.gate == nil {
			return
		}
		var ok bool
		if op, ok = p.gate.next(); !ok || r.stopped.Load() {
			return // one queued at the stop stays in flight, never ended
		}
		op.begin = metrics.Now()
	}
}

// gated is an operation started at its due time, with when it began to
// run (later than start when it waited for a slot of the gate).
type gated struct {
	s                 *phSession
	due, start, begin int64
}

// exec runs a started operation and records it: its lag is start - due,
// its latency end - due, its service time end - begin.
func (p *phasesRun) exec(op gated) {
	r, s := p.r, op.s
	err := s.sess.Do(r.opCtx)
	if r.cutByDrain(err) {
		return // in flight at the stop: never ended in the collector
	}
	end := metrics.Now()
	rec := p.m.pool.Get(uint32(s.id))
	rec.RecordLag(s.op, op.start-op.due)
	class := metrics.ClassOf(err)
	rec.Record(s.op, class, end-op.due, end-op.begin, end-r.coll.Base())
	if s.comp != nil {
		s.comp.done(rec, op.due, op.begin, end, r.coll.Base(), class)
	}
	p.m.pool.Put(rec)
	if err != nil {
		r.coll.NoteError(s.op, err)
	}
	r.coll.OpEnded(s.op)
	s.last = end
	p.prepare(s)
}

// arrive starts every session whose arrival is due by now, the first at
// due, and schedules the next arrival.
func (p *phasesRun) arrive(due int64) {
	r, a := p.r, p.a
	now := metrics.Now()
	for {
		if r.stopped.Load() {
			return
		}
		id := a.seg.Global(a.id)
		a.id++
		a.drawn = false
		s := &phSession{id: id, last: due}
		s.pcg = *rand.NewPCG(r.opt.Seed, splitmix(id+0x9e3779b97f4a7c15))
		s.rng = *rand.New(&s.pcg)
		p.alive.Add(1)
		p.live.Add(1)
		r.coll.SessionStarted()
		s.sess = r.wl.NewSession(id, r.sessionSeed(id))
		s.th, _ = scenario.SessionCapability[scenario.Thinker](s.sess)
		if comp := newComposite(s.sess); comp.c != nil {
			s.comp = &comp
		}
		p.prepare(s)
		next, ok := a.next(p.m.Phases)
		if !ok {
			p.end()
			return
		}
		if next > now {
			p.sched.At(0, next, nil)
			return
		}
		due = next
	}
}

// prepare asks the session for its next operation and schedules it after
// the think time, or ends the session.
func (p *phasesRun) prepare(s *phSession) {
	op, ok := s.sess.Next()
	if !ok {
		p.live.Add(-1)
		p.r.coll.SessionEnded()
		p.end()
		return
	}
	s.op = op
	p.sched.At(s.id, s.last+int64(thinkFor(s.th, p.m.Think, &s.rng)), s)
}
