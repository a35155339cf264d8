package load

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/metrics"
)

// Scheduler holds many waiting jobs (sessions thinking between their
// operations) and starts each at its due time, without a goroutine or a
// timer per job: a waiting job costs one entry in a heap. The jobs are
// spread over shards (one per processor); each shard keeps its jobs in a
// 4-ary min-heap ordered by due time and has one dispatcher goroutine that
// sleeps on a single alarm (alarm_linux.go; a Go timer elsewhere) until
// the earliest due time, then moves every due job, in order, to the
// shard's ready queue.
//
// Runner goroutines take ready jobs and run them; a runner that has
// finished a job takes the next ready one, or the heap's earliest job
// if it is due (on a busy shard most jobs start so, without a timer
// wake-up), or waits idle. The dispatcher
// gives a due job to an idle runner at once; with no runner idle the job
// waits in the ready queue for a runner to finish, and if it has waited
// spawnAfter a new runner starts for it, so a job blocked in a slow store
// holds back the jobs due after it by no more than that, while a fast
// store is served by about as many runners as there are processors. When
// a shard has twice as many busy runners as processors, some are blocked
// off the processor, and a runner starts for a waiting job at once.
//
// A job never starts before its due time: the dispatcher compares the
// due time with the monotonic clock (metrics.Now) before moving it. Jobs
// of one shard start in order of due time (a runner may start later than
// another runner that took a later job, never before its due time).
//
// A job due at or after the horizon is kept but never started (a run's
// end: its remaining schedule). After the stop channel closes, the
// dispatchers and idle runners return; jobs still waiting are dropped.
type Scheduler[T any] struct {
	shards  []*shard[T]
	run     func(job T, due int64)
	stop    <-chan struct{}
	horizon int64
	// spawnAfter is how long a ready job waits for a busy runner
	// before a new runner starts for it (defaultSpawnAfter).
	spawnAfter time.Duration
	// blocked is how many busy runners of a shard mean that some of
	// them wait off the processor: twice its share of the processors.
	blocked int
	wg      sync.WaitGroup
	runners atomic.Int64 // runner goroutines started
}

// defaultSpawnAfter is how long a ready job waits for a busy runner
// before a new runner starts for it.
const defaultSpawnAfter = time.Millisecond

type item[T any] struct {
	due int64
	job T
}

// waiting is a due job in the ready queue, since when it waits there.
type waiting[T any] struct {
	item[T]
	since int64
}

type shard[T any] struct {
	mu      sync.Mutex
	heap    []item[T]
	ready   fifo[waiting[T]] // due jobs no runner has taken yet, in due order
	idle    []chan item[T]   // idle runners, each waiting on its channel
	wakeAt  int64            // when the dispatcher wakes by itself
	kick    chan struct{}    // wakes the dispatcher for an earlier job
	runners int              // runners started on this shard
	// starting counts the runners started that have not yet taken
	// the lock: each will take a waiting job
	starting int
	// alarm, where the system has one, wakes the dispatcher instead of
	// a Go timer and kick (alarm_linux.go says why); set under mu, and
	// closed (nil) when the dispatcher returns
	alarm *alarm
}

// NewScheduler returns a scheduler with shards shards (at least one; 0:
// one per processor) that calls run on a runner goroutine for each job
// at its due time (metrics.Now scale), and stops when stop closes. No
// job due at or after horizon starts (0: no horizon). Start launches it.
func NewScheduler[T any](shards int, horizon int64, stop <-chan struct{}, run func(job T, due int64)) *Scheduler[T] {
	if shards <= 0 {
		shards = runtime.GOMAXPROCS(0)
	}
	if horizon <= 0 {
		horizon = math.MaxInt64
	}
	s := &Scheduler[T]{run: run, stop: stop, horizon: horizon, spawnAfter: defaultSpawnAfter,
		blocked: max(2, 2*runtime.GOMAXPROCS(0)/shards)}
	for range shards {
		sh := &shard[T]{wakeAt: math.MaxInt64, kick: make(chan struct{}, 1)}
		if a, err := newAlarm(); err == nil {
			sh.alarm = a
		}
		s.shards = append(s.shards, sh)
	}
	return s
}

// Start launches the shards' dispatchers.
func (s *Scheduler[T]) Start() {
	go func() {
		<-s.stop
		for _, sh := range s.shards {
			sh.mu.Lock()
			if sh.alarm != nil {
				sh.alarm.set(0)
			}
			sh.mu.Unlock()
		}
	}()
	for _, sh := range s.shards {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.dispatch(sh)
		}()
	}
}

// Wait waits until the dispatchers and runners have returned (after the
// stop, once the running jobs have finished).
func (s *Scheduler[T]) Wait() { s.wg.Wait() }

// Shards returns the number of shards.
func (s *Scheduler[T]) Shards() int { return len(s.shards) }

// Runners returns how many runner goroutines have started: about the
// most jobs that ran at once.
func (s *Scheduler[T]) Runners() int64 { return s.runners.Load() }

// At schedules job on shard key%Shards() at due (metrics.Now scale). A
// job may be scheduled from any goroutine, including from its own run.
func (s *Scheduler[T]) At(key uint64, due int64, job T) {
	sh := s.shards[key%uint64(len(s.shards))]
	sh.mu.Lock()
	sh.push(item[T]{due: due, job: job})
	kick := sh.wakeBy(due, minAlarm)
	sh.mu.Unlock()
	if kick {
		sh.kickDispatcher()
	}
}

// wakeBy makes the dispatcher wake by at (metrics.Now scale) if it would
// wake later, on the alarm after at least least, and reports whether the
// caller must kick it (no alarm) once it has released mu. Called with mu
// held.
func (sh *shard[T]) wakeBy(at int64, least time.Duration) (kick bool) {
	if at >= sh.wakeAt {
		return false
	}
	sh.wakeAt = at
	if sh.alarm != nil {
		sh.alarm.set(max(time.Duration(at-metrics.Now()), least))
		return false
	}
	return true
}

// busy returns how many of the shard's runners are running a job (or
// blocked in one). Called with mu held.
func (sh *shard[T]) busy() int { return sh.runners - sh.starting - len(sh.idle) }

// kickDispatcher wakes the dispatcher sleeping on its Go timer.
func (sh *shard[T]) kickDispatcher() {
	select {
	case sh.kick <- struct{}{}:
	default:
	}
}

// Pending returns how many jobs wait for their due time or a runner.
func (s *Scheduler[T]) Pending() int {
	n := 0
	for _, sh := range s.shards {
		sh.mu.Lock()
		n += len(sh.heap) + sh.ready.len()
		sh.mu.Unlock()
	}
	return n
}

// minAlarm is the shortest sleep of a dispatcher on its alarm: jobs due
// closer together than that are moved together, a wake-up for each would
// cost more than it gains (Go's own timers round such sleeps to a
// millisecond when the processor is idle).
const minAlarm = 500 * time.Microsecond

// maxMove bounds the due jobs a dispatcher moves under one lock.
const maxMove = 1024

// dispatch moves sh's due jobs to runners until the stop.
func (s *Scheduler[T]) dispatch(sh *shard[T]) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	defer func() {
		sh.mu.Lock()
		if sh.alarm != nil {
			sh.alarm.close()
			sh.alarm = nil
		}
		sh.mu.Unlock()
	}()
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		now := metrics.Now()
		spawn := 0
		sh.mu.Lock()
		for moved := 0; moved < maxMove && len(sh.heap) > 0 && sh.heap[0].due <= now && sh.heap[0].due < s.horizon; moved++ {
			it := sh.pop()
			if n := len(sh.idle); n > 0 && sh.ready.len() == 0 {
				ch := sh.idle[n-1]
				sh.idle[n-1] = nil
				sh.idle = sh.idle[:n-1]
				ch <- it // buffered: the runner takes it when it wakes
				continue
			}
			sh.ready.push(waiting[T]{it, now})
		}
		next := int64(math.MaxInt64)
		if len(sh.heap) > 0 && sh.heap[0].due < s.horizon {
			next = sh.heap[0].due
		}
		if w := sh.ready.waiting(); len(w) > 0 {
			// Jobs wait for a busy runner: start one for each that has
			// waited spawnAfter, or come back when the oldest has. With
			// more runners busy than the shard has processors, some are
			// blocked (in a store), not running: start one for each
			// waiting job at once. Runners started but not yet
			// running will take the oldest waiting jobs.
			covered := min(sh.starting, len(w))
			if sh.busy() >= s.blocked {
				spawn = len(w) - covered
			}
			for i := covered + spawn; i < len(w) && w[i].since+int64(s.spawnAfter) <= now; i++ {
				spawn++
			}
			if spawn == 0 && sh.runners == 0 {
				spawn = 1
			}
			sh.runners += spawn
			sh.starting += spawn
			if covered+spawn < len(w) {
				next = min(next, w[covered+spawn].since+int64(s.spawnAfter))
			}
		}
		sh.wakeAt = next
		a := sh.alarm
		if a != nil {
			if next == math.MaxInt64 {
				a.disarm()
			} else {
				a.set(max(time.Duration(next-now), minAlarm))
			}
		}
		sh.mu.Unlock()
		for range spawn {
			s.runners.Add(1)
			s.wg.Add(1)
			go s.runner(sh)
		}
		if next <= now {
			continue // more than maxMove were due
		}
		if a != nil {
			if !a.wait() {
				return
			}
			continue
		}
		var tc <-chan time.Time
		if next != math.MaxInt64 {
			timer.Reset(time.Duration(next - now))
			tc = timer.C
		}
		select {
		case <-tc:
		case <-sh.kick:
		case <-s.stop:
			return
		}
	}
}

// runner runs ready jobs of sh until the stop.
func (s *Scheduler[T]) runner(sh *shard[T]) {
	defer s.wg.Done()
	ch := make(chan item[T], 1)
	sh.mu.Lock()
	sh.starting--
	sh.mu.Unlock()
	for {
		sh.mu.Lock()
		if sh.ready.len() == 0 {
			// A busy shard's next job may be due already: take it
			// without waiting for the dispatcher's timer.
			if len(sh.heap) > 0 && sh.heap[0].due < s.horizon && sh.heap[0].due <= metrics.Now() {
				it := sh.pop()
				sh.mu.Unlock()
				select {
				case <-s.stop:
					return
				default:
				}
				s.run(it.job, it.due)
				continue
			}
			sh.idle = append(sh.idle, ch)
			sh.mu.Unlock()
			select {
			case it := <-ch:
				s.run(it.job, it.due)
				continue
			case <-s.stop:
				return
			}
		}
		it := sh.ready.pop().item
		// This runner is busy now: if that makes the shard's busy
		// runners as many as the blocked threshold while jobs still
		// wait, the dispatcher starts runners for them at once rather
		// than after spawnAfter (it checked before this runner took
		// its job).
		kick := sh.ready.len() > sh.starting && sh.busy() >= s.blocked && sh.wakeBy(metrics.Now(), time.Nanosecond)
		sh.mu.Unlock()
		if kick {
			sh.kickDispatcher()
		}
		select {
		case <-s.stop:
			return
		default:
		}
		s.run(it.job, it.due)
	}
}

// The heap is 4-ary: half the depth of a binary heap, and a node's
// children share a cache line or two, for heaps of a million entries.

func (sh *shard[T]) push(it item[T]) {
	h := append(sh.heap, it)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if h[p].due <= it.due {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = it
	sh.heap = h
}

func (sh *shard[T]) pop() item[T] {
	h := sh.heap
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h[n] = item[T]{}
	h = h[:n]
	if n > 0 {
		i := 0
		for {
			c := 4*i + 1
			if c >= n {
				break
			}
			m := c
			for k := c + 1; k < c+4 && k < n; k++ {
				if h[k].due < h[m].due {
					m = k
				}
			}
			if h[m].due >= last.due {
				break
			}
			h[i] = h[m]
			i = m
		}
		h[i] = last
	}
	sh.heap = h
	return top
}
