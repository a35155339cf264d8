package kit

import (
	"sync"
	"sync/atomic"
)

// ackWindow is the size of the lock-free ring of acknowledgements; it is far
// above the number of sessions in flight. An acknowledgement further ahead
// than that (a session starved while others ran on) goes to an overflow set
// under the lock instead of waiting, so Ack never blocks on another session.
const ackWindow = 1 << 16

// AckCounter hands out numbers and tracks which have been acknowledged
// (YCSB's AcknowledgedCounterGenerator): insert key numbers, so that
// readers choose only keys whose insert has finished, or the versions of
// writes, so that a stale read can be told by the floor below which every
// write has ended. Last is the highest number such that it and every
// smaller one are acknowledged. It is safe for concurrent use.
type AckCounter struct {
	next     atomic.Uint64       // next number to hand out
	limit    atomic.Uint64       // every number < limit is acknowledged; changed only under mu
	mu       sync.Mutex          // held by the goroutine advancing limit
	overflow map[uint64]struct{} // acknowledged numbers >= limit+ackWindow when acked; under mu
	window   [ackWindow]atomic.Bool
}

// NewAckCounter starts at start: numbers below it count as acknowledged.
func NewAckCounter(start uint64) *AckCounter {
	c := &AckCounter{overflow: map[uint64]struct{}{}}
	c.next.Store(start)
	c.limit.Store(start)
	return c
}

// Take returns the next number.
func (c *AckCounter) Take() uint64 { return c.next.Add(1) - 1 }

// Last returns the highest number such that it and every smaller one are
// acknowledged (limit-1; 0 when nothing is).
func (c *AckCounter) Last() uint64 {
	l := c.limit.Load()
	if l == 0 {
		return 0
	}
	return l - 1
}

// Limit returns the lowest number not acknowledged: every smaller one is
// (Last+1, or 0 when nothing is).
func (c *AckCounter) Limit() uint64 { return c.limit.Load() }

// Ack acknowledges k, a number returned by Take, and advances Last over any
// contiguous run of acknowledged numbers. It never waits for other sessions.
func (c *AckCounter) Ack(k uint64) {
	if k-c.limit.Load() >= ackWindow {
		c.mu.Lock()
		// limit only grows, and only under mu: decide again while holding it.
		if k-c.limit.Load() >= ackWindow {
			c.overflow[k] = struct{}{}
			c.mu.Unlock()
			// An ack at limit may have found the lock taken by us and left
			// the walk to whoever held it: walk on its behalf.
			c.advance()
			return
		}
		c.mu.Unlock()
	}
	c.window[k%ackWindow].Store(true)
	c.advance()
}

// advance moves limit over the acknowledged numbers at it, unless another
// goroutine is doing so.
func (c *AckCounter) advance() {
	for c.mu.TryLock() {
		l := c.limit.Load()
		for {
			if c.window[l%ackWindow].Load() {
				c.window[l%ackWindow].Store(false)
			} else if _, ok := c.overflow[l]; ok {
				delete(c.overflow, l)
			} else {
				break
			}
			l++
		}
		c.limit.Store(l)
		c.mu.Unlock()
		// An ack that arrived while we held the lock may have found it
		// taken; look again so it is not left behind.
		if !c.window[l%ackWindow].Load() {
			return
		}
	}
}
