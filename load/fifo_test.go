package load

import "testing"

// TestFIFO: values leave in the order they came, across the moves of the
// waiting part to the start of the slice.
func TestFIFO(t *testing.T) {
	var q fifo[int]
	next, want := 0, 0
	for round := range 50 {
		for range 100 + round {
			q.push(next)
			next++
		}
		for range 90 {
			if got := q.pop(); got != want {
				t.Fatalf("pop = %d, want %d", got, want)
			}
			want++
		}
		if q.len() != next-want || len(q.waiting()) != q.len() || q.waiting()[0] != want {
			t.Fatalf("len %d, waiting %v..., want %d from %d", q.len(), q.waiting()[:1], next-want, want)
		}
	}
	for q.len() > 0 {
		if got := q.pop(); got != want {
			t.Fatalf("pop = %d, want %d", got, want)
		}
		want++
	}
	if want != next || q.head != 0 || len(q.buf) != 0 {
		t.Fatalf("drained at %d of %d, head %d, %d kept", want, next, q.head, len(q.buf))
	}
}
