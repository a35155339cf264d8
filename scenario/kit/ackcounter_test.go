package kit

import (
	"sync"
	"testing"
)

func TestAckCounter(t *testing.T) {
	t.Parallel()
	c := NewAckCounter(100)
	if c.Last() != 99 {
		t.Fatalf("last %d", c.Last())
	}
	a, b, d := c.Take(), c.Take(), c.Take()
	c.Ack(d)
	c.Ack(a)
	if c.Last() != 100 {
		t.Fatalf("last %d after acking 100 and 102, want 100", c.Last())
	}
	c.Ack(b)
	if c.Last() != 102 || c.Limit() != 103 {
		t.Fatalf("last %d, limit %d after acking all, want 102 and 103", c.Last(), c.Limit())
	}

	// Concurrent takers acknowledging out of order, past the window size.
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var held []uint64
			for i := range 20_000 {
				held = append(held, c.Take())
				if i%7 == 6 {
					for j := len(held) - 1; j >= 0; j-- {
						c.Ack(held[j])
					}
					held = held[:0]
				}
			}
			for _, k := range held {
				c.Ack(k)
			}
		}()
	}
	wg.Wait()
	if want := uint64(103 + 8*20_000 - 1); c.Last() != want {
		t.Fatalf("last %d, want %d", c.Last(), want)
	}

	// A starved session: one number held while others take and acknowledge
	// far more than the ring holds. Acks must not wait (the CI machine once
	// deadlocked here when they did), and last jumps once the held one lands.
	held := c.Take()
	var after []uint64
	for range 3 * ackWindow {
		after = append(after, c.Take())
	}
	for i := len(after) - 1; i >= 0; i-- { // newest first: the furthest ahead
		c.Ack(after[i])
	}
	if c.Last() != held-1 {
		t.Fatalf("last %d with %d unacknowledged, want %d", c.Last(), held, held-1)
	}
	c.Ack(held)
	if want := after[len(after)-1]; c.Last() != want {
		t.Fatalf("last %d after the starved ack, want %d", c.Last(), want)
	}
	if len(c.overflow) != 0 {
		t.Fatalf("%d numbers left in the overflow set", len(c.overflow))
	}
}
