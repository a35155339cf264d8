package load

import "sync"

// gate bounds how many operations run at once (scenario.Limited): an
// operation that finds every slot taken waits in a FIFO queue, as an entry
// rather than a blocked goroutine, and the runner that frees a slot runs
// the oldest waiting operation next.
type gate[T any] struct {
	mu    sync.Mutex
	slots int
	free  int
	queue fifo[T]
	most  int // the most jobs queued at once
}

// newGate returns a gate of n slots, or nil for n <= 0 (no bound).
func newGate[T any](n int) *gate[T] {
	if n <= 0 {
		return nil
	}
	return &gate[T]{slots: n, free: n}
}

// enter takes a slot for job and reports true, or queues job and reports
// false.
func (g *gate[T]) enter(job T) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.free > 0 {
		g.free--
		return true
	}
	g.queue.push(job)
	g.most = max(g.most, g.queue.len())
	return false
}

// next hands the caller's slot to the oldest queued job and returns it,
// or frees the slot and reports false when none waits.
func (g *gate[T]) next() (T, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.queue.len() == 0 {
		g.free++
		var zero T
		return zero, false
	}
	job := g.queue.pop()
	return job, true
}

// stats returns the slots, and how many jobs are queued now and were at
// most.
func (g *gate[T]) stats() (slots, waiting, most int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.slots, g.queue.len(), g.most
}
