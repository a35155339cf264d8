package load

// fifo is a first-in first-out queue on one slice that reuses its space:
// pop moves a head index, and the waiting part moves down to the start
// once most of the slice before it is popped.
type fifo[T any] struct {
	buf  []T
	head int // buf[head:] are waiting
}

// push adds v at the end.
func (q *fifo[T]) push(v T) { q.buf = append(q.buf, v) }

// len returns how many are waiting.
func (q *fifo[T]) len() int { return len(q.buf) - q.head }

// waiting returns the waiting ones, oldest first (valid until the next
// push or pop).
func (q *fifo[T]) waiting() []T { return q.buf[q.head:] }

// pop removes and returns the oldest; the queue must not be empty.
func (q *fifo[T]) pop() T {
	var zero T
	v := q.buf[q.head]
	q.buf[q.head] = zero
	q.head++
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	} else if q.head >= 1024 && q.head > len(q.buf)/2 {
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	return v
}
