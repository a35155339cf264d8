package audit

import (
	"errors"
	"time"

	"github.com/scalelab/scalelab/metrics"
)

// RegWrite is one update or delete of a register as read back from the
// history: the version it stores, when it was invoked and when it ended
// (microseconds since the history began; End is math.MaxInt64 while the
// outcome is unknown or was never recorded) and its outcome.
type RegWrite struct {
	Key, Version int64
	Inv, End     int64
	Delete       bool
	Insert       bool // the key is new: before this write it did not exist
	Outcome      Outcome
	Class        metrics.Class
}

// regPending is a register write a session invoked and whose outcome Done
// records.
type regPending struct {
	key, version int64
}

// Updating logs that register key is about to be overwritten (del: deleted)
// and returns the write's version, unique within the run (from 1; within
// the test when the writer has a segment, Writer.SetSegment): the
// session stores it with the value so that the read-back can tell which
// write a register holds.
func (l *Log) Updating(key int64, del bool) int64 {
	kind := byte(kindRegWrite)
	if del {
		kind = kindRegDelete
	}
	return l.register(kind, key)
}

// Inserting logs that register key, which does not exist yet, is about to
// be created, and returns the write's version (as Updating).
func (l *Log) Inserting(key int64) int64 { return l.register(kindRegInsert, key) }

func (l *Log) register(kind byte, key int64) int64 {
	v := l.w.base + int64(l.w.seg.Global(uint64(l.w.vers.Add(1)-1))) + 1
	t := l.w.micros()
	s := l.s
	s.mu.Lock()
	s.buf = appendRegInv(s.buf, &s.d, kind, key, v, t)
	size := len(s.buf)
	s.mu.Unlock()
	l.w.full(s, size)
	l.regs = append(l.regs, regPending{key, v})
	return v
}

// micros is the time since the history began, in microseconds.
func (w *Writer) micros() int64 { return int64(time.Since(w.start) / time.Microsecond) }

// NotApplied logs the register writes this operation invoked so far as
// failed (known not applied, class not_found): the store refused them,
// although the operation itself went as the session expected (a patient
// answering a request that another visit already answered). The
// operation's own outcome no longer applies to them.
func (l *Log) NotApplied() { l.doneRegisters(errNotApplied) }

// errNotApplied is the outcome NotApplied gives: a single-item write
// refused as not found is failed (Classify).
var errNotApplied = metrics.WithClass(metrics.NotFound, errors.New("refused by the store: not applied"))

// doneRegisters logs the outcome of the pending register writes. A
// register write is one item: Classify's single-item rule applies.
func (l *Log) doneRegisters(err error) {
	out, class := Classify(err, 1)
	t := l.w.micros()
	s := l.s
	s.mu.Lock()
	for _, r := range l.regs {
		switch out {
		case OK:
			s.buf = appendRegOut(s.buf, &s.d, kindRegOK, 0, r.version, t)
		case Failed:
			s.buf = appendRegOut(s.buf, &s.d, kindRegFailed, class, r.version, t)
		default:
			s.buf = appendRegOut(s.buf, &s.d, kindRegUnknown, class, r.version, t)
		}
	}
	size := len(s.buf)
	s.mu.Unlock()
	l.w.full(s, size)
	l.regs = l.regs[:0]
}
