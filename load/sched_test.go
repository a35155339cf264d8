package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

// ran is what a job saw when it ran.
type ran struct {
	id       int
	due, now int64
}

// timersOnly makes s's dispatchers sleep on Go timers, as they do where
// the system has no timerfd alarm. Called before Start.
func timersOnly[T any](s *Scheduler[T]) {
	for _, sh := range s.shards {
		if sh.alarm != nil {
			sh.alarm.close()
			sh.alarm = nil
		}
	}
}

// runAll schedules jobs due at now+offsets[i] on one shard and returns
// what each saw, in the order they started (on Go timers with timers).
func runAll(t *testing.T, offsets []time.Duration, oneRunner, timers bool) []ran {
	t.Helper()
	stop := make(chan struct{})
	var mu sync.Mutex
	var got []ran
	var wg sync.WaitGroup
	wg.Add(len(offsets))
	s := NewScheduler(1, 0, stop, func(id int, due int64) {
		now := metrics.Now()
		mu.Lock()
		got = append(got, ran{id, due, now})
		mu.Unlock()
		wg.Done()
	})
	if oneRunner {
		s.spawnAfter = time.Hour
	}
	if timers {
		timersOnly(s)
	}
	s.Start()
	base := metrics.Now()
	for i, off := range offsets {
		s.At(uint64(i), base+int64(off), i)
	}
	wg.Wait()
	close(stop)
	s.Wait()
	return got
}

// TestSchedulerNoEarlyStart: no job starts before its due time, and
// every job runs exactly once, on the alarm and on Go timers.
func TestSchedulerNoEarlyStart(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	offsets := make([]time.Duration, 2000)
	for i := range offsets {
		offsets[i] = time.Duration(rng.Int64N(int64(200 * time.Millisecond)))
	}
	for _, timers := range []bool{false, true} {
		got := runAll(t, offsets, false, timers)
		seen := make([]bool, len(offsets))
		for _, g := range got {
			if g.now < g.due {
				t.Errorf("timers %v: job %d started %v before its due time", timers, g.id, time.Duration(g.due-g.now))
			}
			if seen[g.id] {
				t.Errorf("timers %v: job %d ran twice", timers, g.id)
			}
			seen[g.id] = true
		}
		if len(got) != len(offsets) {
			t.Fatalf("timers %v: %d jobs ran, want %d", timers, len(got), len(offsets))
		}
	}
}

// TestSchedulerOrder: with jobs that take no time, a shard's jobs
// start in order of due time, whatever order they were scheduled in.
func TestSchedulerOrder(t *testing.T) {
	t.Parallel()
	// One runner (none added for jobs kept waiting, as a busy machine
	// would), so the start order is the order jobs left the heap.
	offsets := make([]time.Duration, 60)
	for i := range offsets {
		offsets[i] = time.Duration(len(offsets)-i) * 2 * time.Millisecond
	}
	got := runAll(t, offsets, true, false)
	if !slices.IsSortedFunc(got, func(a, b ran) int { return int(a.due - b.due) }) {
		t.Errorf("jobs did not start in due order: %v", got)
	}
	// Jobs due at once (already due when scheduled) start in due order
	// too: they leave the heap in order.
	offsets = offsets[:0]
	for i := range 500 {
		offsets = append(offsets, time.Duration(-i)*time.Microsecond)
	}
	stop := make(chan struct{})
	var order []int64
	done := make(chan struct{})
	s := NewScheduler(1, 0, stop, func(_ int, due int64) {
		order = append(order, due) // one runner
		if len(order) == len(offsets) {
			close(done)
		}
	})
	s.spawnAfter = time.Hour
	base := metrics.Now()
	for i, off := range offsets {
		s.At(0, base+int64(off), i)
	}
	s.Start()
	<-done
	close(stop)
	s.Wait()
	if !slices.IsSorted(order) {
		t.Errorf("due jobs did not leave in due order")
	}
}

// TestSchedulerBlockedJob: a job that blocks does not hold back the
// jobs due after it: a new runner starts for them. Job 0 waits until
// job 1 (due later, same shard) has run, which would never happen with
// a fixed single runner.
func TestSchedulerBlockedJob(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	second := make(chan struct{})
	done := make(chan struct{})
	s := NewScheduler(1, 0, stop, func(id int, _ int64) {
		switch id {
		case 0:
			select {
			case <-second:
			case <-time.After(time.Minute):
				t.Error("job 1 did not run while job 0 was blocked")
			}
			close(done)
		case 1:
			close(second)
		}
	})
	s.Start()
	now := metrics.Now()
	s.At(0, now, 0)
	s.At(0, now+int64(time.Millisecond), 1)
	<-done
	close(stop)
	s.Wait()
	if s.Runners() < 2 {
		t.Errorf("%d runners started, want a second one for the job behind the blocked one", s.Runners())
	}
}

// TestSchedulerHorizonAndStop: a job due at or after the horizon never
// starts, a job may schedule itself again from its run, and after the
// stop the waiting jobs are dropped and Wait returns.
func TestSchedulerHorizonAndStop(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	base := metrics.Now()
	horizon := base + int64(50*time.Millisecond)
	var mu sync.Mutex
	runs := map[int]int{}
	var s *Scheduler[int]
	s = NewScheduler(2, horizon, stop, func(id int, due int64) {
		mu.Lock()
		runs[id]++
		mu.Unlock()
		if due >= horizon {
			t.Errorf("job %d started at or after the horizon", id)
		}
		if id == 1 {
			s.At(1, due+int64(time.Millisecond), 1) // runs again until the horizon
		}
	})
	s.Start()
	s.At(0, horizon, 0)
	s.At(1, base, 1)
	s.At(2, horizon-int64(time.Millisecond), 2)
	deadline := time.Now().Add(time.Minute)
	for {
		if time.Now().After(deadline) {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("jobs before the horizon did not all run within a minute: runs %v, pending %d", runs, s.Pending())
		}
		mu.Lock()
		n := runs[2]
		mu.Unlock()
		if n == 1 && s.Pending() == 2 { // job 0 and job 1's run past the horizon
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	s.Wait()
	if runs[0] != 0 || runs[1] < 2 || runs[1] > 50 {
		t.Errorf("runs %v: want job 0 never (at the horizon), job 1 several times before it", runs)
	}
}

// TestShardHeap: the 4-ary heap pops in order of due time.
func TestShardHeap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var sh shard[int]
	var want []int64
	for i := range 5000 {
		d := rng.Int64N(1000)
		want = append(want, d)
		sh.push(item[int]{due: d, job: i})
		if i%7 == 0 { // interleave pops with pushes
			slices.Sort(want)
			if got := sh.pop().due; got != want[0] {
				t.Fatalf("pop %d, want the least due %d", got, want[0])
			}
			want = want[1:]
		}
	}
	slices.Sort(want)
	for _, w := range want {
		if got := sh.pop().due; got != w {
			t.Fatalf("pop %d, want %d", got, w)
		}
	}
	if len(sh.heap) != 0 {
		t.Errorf("%d left in the heap", len(sh.heap))
	}
}

// timedWorkload's sessions note when each Do started and ended.
type timedWorkload struct {
	fakeWorkload
	mu    sync.Mutex
	spans map[uint64][][2]int64
}

type timedSession struct {
	w  *timedWorkload
	id uint64
	fakeSession
}

func (w *timedWorkload) NewSession(id, seed uint64) scenario.Session {
	w.fakeWorkload.NewSession(id, seed)
	return &timedSession{w: w, id: id, fakeSession: fakeSession{w: &w.fakeWorkload}}
}

func (s *timedSession) Do(ctx context.Context) error {
	start := metrics.Now()
	err := s.fakeSession.Do(ctx)
	end := metrics.Now()
	s.w.mu.Lock()
	s.w.spans[s.id] = append(s.w.spans[s.id], [2]int64{start, end})
	s.w.mu.Unlock()
	return err
}

// lastSessions is a sink keeping the concurrent sessions of the last
// interval.
type lastSessions struct{ n atomic.Int64 }

func (l *lastSessions) Interval(iv *metrics.Interval) error {
	l.n.Store(iv.Sessions)
	return nil
}

// TestPhasesThinkFromPreviousEnd: on the scheduler, no session starts an
// operation before its previous one ended plus the think time, every
// operation is recorded with its schedule lag, and the sessions still
// thinking at the stop are no longer counted after it.
func TestPhasesThinkFromPreviousEnd(t *testing.T) {
	t.Parallel()
	const think = 30 * time.Millisecond
	wl := &timedWorkload{fakeWorkload: fakeWorkload{service: time.Millisecond}, spans: map[uint64][][2]int64{}}
	m := &Phases{Phases: []Phase{{Duration: time.Second, Rate: 200}}, Think: Think{kind: 'c', a: think}} // arrivals outlast the run
	last := &lastSessions{}
	c := metrics.NewCollector(metrics.Config{Ops: wl.Operations(), Open: true, Sinks: []metrics.Sink{last}})
	runCollected(t, wl, c, m, Options{Duration: 400 * time.Millisecond})
	totals, lag, _ := c.Totals()
	var ops int
	for id, spans := range wl.spans {
		ops += len(spans)
		for k := 1; k < len(spans); k++ {
			if spans[k][0] < spans[k-1][1]+int64(think) {
				t.Fatalf("session %d: operation %d started %v after the previous one ended, before the think time %v", id, k, time.Duration(spans[k][0]-spans[k-1][1]), think)
			}
		}
	}
	if n := wl.sessions.Load(); n < 20 || ops < int(n) {
		t.Fatalf("%d sessions ran %d operations", n, ops)
	}
	if got := totals[0].Count(); got != int64(ops) || lag.TotalCount() != int64(ops) {
		t.Errorf("%d operations done, %d recorded, %d lags recorded", ops, got, lag.TotalCount())
	}
	if n := last.n.Load(); n != 0 {
		t.Errorf("%d sessions still counted after the stop", n)
	}
}

// TestSchedulerBlockedRunners: once a shard has as many busy runners as
// the blocked threshold (one here), a waiting job gets a runner at
// once, without waiting spawnAfter (an hour here): four jobs that each
// wait until all four have started complete only so. The jobs are due
// one after another, or all at the dispatcher's first wake-up (before
// any runner is busy: the runner that becomes busy wakes it again).
func TestSchedulerBlockedRunners(t *testing.T) {
	t.Parallel()
	for _, early := range []bool{false, true} {
		t.Run(fmt.Sprintf("early=%v", early), func(t *testing.T) {
			t.Parallel()
			const n = 4
			stop := make(chan struct{})
			var started sync.WaitGroup
			started.Add(n)
			all := make(chan struct{})
			var done sync.WaitGroup
			done.Add(n)
			s := NewScheduler(1, 0, stop, func(int, int64) {
				started.Done()
				select {
				case <-all:
				case <-time.After(20 * time.Second):
					t.Error("not every job got a runner while the others were blocked")
				}
				done.Done()
			})
			s.spawnAfter = time.Hour
			s.blocked = 1
			now := metrics.Now()
			if !early {
				s.Start()
			}
			for i := range n {
				due := now + int64(i)*int64(time.Millisecond)
				if early {
					due = now - int64(time.Second)
				}
				s.At(0, due, i)
			}
			if early {
				s.Start()
			}
			go func() { started.Wait(); close(all) }()
			done.Wait()
			close(stop)
			s.Wait()
			if r := s.Runners(); r != n {
				t.Errorf("%d runners started for %d jobs", r, n)
			}
		})
	}
}

// TestSchedulerBlockedRunnersRandom: the same rule over random rounds:
// jobs due at random times (some already past), scheduled from several
// goroutines, before or after the start, every one blocking until all
// have started, on the alarm in even rounds and on Go timers in odd
// ones. A wake-up the dispatcher misses leaves a job waiting spawnAfter
// (an hour), and the round times out.
func TestSchedulerBlockedRunnersRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 40 {
		n := 2 + rng.IntN(20)
		early := rng.IntN(2) == 0
		dues := make([]int64, n)
		now := metrics.Now()
		for i := range dues {
			dues[i] = now + int64(rng.IntN(6)-2)*int64(time.Millisecond)
		}
		stop := make(chan struct{})
		var started, done sync.WaitGroup
		started.Add(n)
		done.Add(n)
		all := make(chan struct{})
		s := NewScheduler(1, 0, stop, func(int, int64) {
			started.Done()
			<-all
			done.Done()
		})
		s.spawnAfter = time.Hour
		s.blocked = 1
		if round%2 == 1 {
			timersOnly(s)
		}
		if !early {
			s.Start()
		}
		var sched sync.WaitGroup
		for g := range 3 {
			sched.Go(func() {
				for i := g; i < n; i += 3 {
					s.At(0, dues[i], i)
				}
			})
		}
		if early {
			sched.Wait()
			s.Start()
		}
		sched.Wait()
		ok := make(chan struct{})
		go func() { started.Wait(); close(ok) }()
		select {
		case <-ok:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d (%d jobs, scheduled before the start %v, Go timers %v): %d runners for jobs that all block", round, n, early, round%2 == 1, s.Runners())
		}
		close(all)
		done.Wait()
		close(stop)
		s.Wait()
	}
}
