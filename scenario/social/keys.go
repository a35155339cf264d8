package social

import (
	"sync"
	"sync/atomic"

	"github.com/scalelab/scalelab/scenario/kit"
	"github.com/scalelab/scalelab/segment"
)

// keyspace tracks which user numbers exist, so that sessions choose users
// that should be there: users 0..base-1 are loaded; inserts take numbers
// from base up; a delete marks its user gone before it is sent, and an
// insert that failed marks its number gone, so no session reads them as if
// they had to exist. A read that still finds nothing (it raced a delete) is
// counted not_found, and the workload's report says whether the user had
// been deleted.
type keyspace struct {
	base uint64 // users loaded (numbers below it exist unless deleted)
	// ctr hands out the numbers inserts take; every number below its
	// Limit is settled: loaded or insert finished.
	ctr *kit.AckCounter

	gone  sync.Map // user number -> struct{}: deleted, or insert failed
	ngone atomic.Int64

	deletes sync.Map // user number -> *atomic.Int32: deletes sent for it

	// seg is this process's share of a divided test: its inserts take
	// user numbers from its own range (segment.Segment.Key); ctr counts
	// inserts as if they followed base.
	seg segment.Segment
}

// user is the user number of counter value c: c itself below base or in a
// whole test, else in this segment's own range.
func (k *keyspace) user(c uint64) uint64 {
	if !k.seg.Split() || c < k.base {
		return c
	}
	return uint64(k.seg.Key(int64(k.base), int64(c-k.base)))
}

// counter is the inverse of user.
func (k *keyspace) counter(n uint64) uint64 {
	if local, ok := k.seg.Local(int64(k.base), int64(n)); ok && n >= k.base {
		return k.base + uint64(local)
	}
	return n
}

func newKeyspace(base uint64) *keyspace {
	return &keyspace{base: base, ctr: kit.NewAckCounter(base)}
}

// skipTo makes inserts start at n (> base): numbers below it were used by
// an earlier run. Choosers may pick them; missing ones are not_found. It
// is called before any insert.
func (k *keyspace) skipTo(n uint64) { k.ctr = kit.NewAckCounter(n) }

// take returns a fresh user number for an insert.
func (k *keyspace) take() uint64 { return k.user(k.ctr.Take()) }

// settle records that the insert of n finished (ok: the store acknowledged
// it); choosers see n once every smaller number has settled too.
func (k *keyspace) settle(n uint64, ok bool) {
	if !ok {
		k.markGone(n)
	}
	k.ctr.Ack(k.counter(n))
}

// size returns the count of user numbers choosers may pick from: user(0)
// .. user(size-1).
func (k *keyspace) size() uint64 { return k.ctr.Limit() }

// markGone records that n no longer exists (or never did); it reports
// false when n was already gone.
func (k *keyspace) markGone(n uint64) bool {
	if _, loaded := k.gone.LoadOrStore(n, struct{}{}); loaded {
		return false
	}
	k.ngone.Add(1)
	return true
}

// isGone reports whether n was deleted or its insert failed.
func (k *keyspace) isGone(n uint64) bool {
	if k.ngone.Load() == 0 {
		return false
	}
	_, ok := k.gone.Load(n)
	return ok
}

// attemptDelete counts a delete of n about to be sent.
func (k *keyspace) attemptDelete(n uint64) {
	c, _ := k.deletes.LoadOrStore(n, new(atomic.Int32))
	c.(*atomic.Int32).Add(1)
}

// deleteAttempts returns how many deletes of n were sent.
func (k *keyspace) deleteAttempts(n uint64) int32 {
	c, ok := k.deletes.Load(n)
	if !ok {
		return 0
	}
	return c.(*atomic.Int32).Load()
}
