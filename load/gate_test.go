package load

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

// TestGateFIFO: a gate admits as many jobs as it has slots, queues the
// rest in order, and hands a freed slot to the oldest queued job.
func TestGateFIFO(t *testing.T) {
	if newGate[int](0) != nil || newGate[int](-1) != nil {
		t.Fatal("a gate of no slots must be nil (no bound)")
	}
	g := newGate[int](2)
	for i, want := range []bool{true, true, false, false, false} {
		if got := g.enter(i); got != want {
			t.Fatalf("enter(%d) = %v, want %v", i, got, want)
		}
	}
	for _, want := range []int{2, 3, 4} {
		if got, ok := g.next(); !ok || got != want {
			t.Fatalf("next = %d, %v; want %d", got, ok, want)
		}
	}
	// the two slots now free one by one, then admit again
	for range 2 {
		if _, ok := g.next(); ok {
			t.Fatal("next with nothing queued must free the slot")
		}
	}
	if !g.enter(5) || !g.enter(6) || g.enter(7) {
		t.Fatal("the freed slots were not given back")
	}
	if slots, waiting, most := g.stats(); slots != 2 || waiting != 1 || most != 3 {
		t.Fatalf("stats %d %d %d, want 2 slots, 1 waiting, at most 3", slots, waiting, most)
	}
}

// limitedWorkload is a fakeWorkload that runs at most n operations at
// once and counts how many ran together.
type limitedWorkload struct {
	fakeWorkload
	n         int
	inProcess bool
	now, most atomic.Int64
	sawProcs  *atomic.Int64 // when set, GOMAXPROCS as an operation saw it
}

func (w *limitedWorkload) Inflight() (int, bool) { return w.n, w.inProcess }

func (w *limitedWorkload) NewSession(id, seed uint64) scenario.Session {
	w.sessions.Add(1)
	return &limitedSession{fakeSession: fakeSession{w: &w.fakeWorkload}, l: w}
}

type limitedSession struct {
	fakeSession
	l *limitedWorkload
}

func (s *limitedSession) Do(ctx context.Context) error {
	if s.l.sawProcs != nil {
		s.l.sawProcs.Store(int64(runtime.GOMAXPROCS(0)))
	}
	n := s.l.now.Add(1)
	defer s.l.now.Add(-1)
	for m := s.l.most.Load(); n > m && !s.l.most.CompareAndSwap(m, n); m = s.l.most.Load() {
	}
	return s.fakeSession.Do(ctx)
}

// TestPhasesLimited: with a scenario.Limited workload the phases model
// runs at most its bound of operations at once; the others start on
// schedule (small lag) and wait in the model's queue, the wait in their
// latency; an in-process store leaves the generator a processor.
func TestPhasesLimited(t *testing.T) {
	t.Parallel()
	wl := &limitedWorkload{fakeWorkload: fakeWorkload{ops: 3, service: 5 * time.Millisecond}, n: 2}
	m := &Phases{Phases: []Phase{{Duration: 300 * time.Millisecond, Rate: 400}}, Think: Think{kind: 'c', a: time.Millisecond}}
	c := metrics.NewCollector(metrics.Config{Ops: wl.Operations(), Open: true})
	runCollected(t, wl, c, m, Options{Duration: m.Total() + 20*time.Second})
	totals, lag, measured := c.Totals()
	s := metrics.Summarize(totals, measured, c.InFlight())[0]
	if got := wl.most.Load(); got != 2 {
		t.Errorf("at most %d operations ran at once, want the bound, 2", got)
	}
	q := m.Queue()
	if q.Slots != 2 || q.InProcess || q.MaxWaiting < 10 {
		t.Errorf("queue %+v: want 2 slots and many waiting (about 120 sessions of 3 ops on 2 slots of 5 ms)", q)
	}
	ls := metrics.SummarizeLag(lag)
	// ~360 operations of 5 ms on 2 slots take ~0.9 s: queued ones wait
	// hundreds of ms (in their latency), yet each started on schedule
	if s.Count != 3*wl.sessions.Load() || s.P99Ms == nil || *s.P99Ms < 100 {
		t.Errorf("count %d of %d sessions, latency p99 %v ms: want every op and latencies that include the queue", s.Count, wl.sessions.Load(), fmtMs(s.P99Ms))
	}
	if ls.P50Ms == nil || *ls.P50Ms > 50 || *ls.P50Ms >= *s.P50Ms {
		t.Errorf("lag p50 %v ms against latency p50 %v ms: the queue wait must not count as lag", fmtMs(ls.P50Ms), fmtMs(s.P50Ms))
	}
}

func fmtMs(v *float64) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

// TestPhasesLimitedInProcess: with a store in this process at most
// processors-1 operations run at once (at least one), the runtime has a
// processor more during the run, and its count is restored after.
func TestPhasesLimitedInProcess(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	wl := &limitedWorkload{fakeWorkload: fakeWorkload{ops: 2, service: time.Millisecond}, n: 64, inProcess: true}
	var during atomic.Int64
	wl.sawProcs = &during
	m := &Phases{Phases: []Phase{{Duration: 100 * time.Millisecond, Rate: 200}}, Think: Think{kind: 'c', a: time.Millisecond}}
	execute(t, wl, m, Options{Duration: m.Total() + 20*time.Second})
	want := max(1, procs-1)
	if q := m.Queue(); q.Slots != want || !q.InProcess || wl.most.Load() > int64(want) {
		t.Errorf("queue %+v, %d at once: want %d slots (processors-1) and no more at once", q, wl.most.Load(), want)
	}
	if got := during.Load(); got != int64(procs+1) {
		t.Errorf("GOMAXPROCS %d during the run, want %d", got, procs+1)
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d after the run, want it restored to %d", got, procs)
	}
}

// TestExtraProcessorShared: runs side by side share the one extra
// processor, and the last to release it restores the count.
func TestExtraProcessorShared(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	p1, r1 := extraProcessor()
	p2, r2 := extraProcessor()
	if p1 != base || p2 != base || runtime.GOMAXPROCS(0) != base+1 {
		t.Fatalf("held twice: procs %d and %d, GOMAXPROCS %d; want %d, %d, %d", p1, p2, runtime.GOMAXPROCS(0), base, base, base+1)
	}
	r1()
	r1() // a second release of the same hold counts once
	if runtime.GOMAXPROCS(0) != base+1 {
		t.Fatalf("one run still holds it, GOMAXPROCS %d, want %d", runtime.GOMAXPROCS(0), base+1)
	}
	r2()
	if runtime.GOMAXPROCS(0) != base {
		t.Fatalf("all released, GOMAXPROCS %d, want %d", runtime.GOMAXPROCS(0), base)
	}
}
