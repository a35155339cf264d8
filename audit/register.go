package audit

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/scalelab/scalelab/metrics"
)

// Tags of register lines (see the line format in history.go).
const (
	tagRegWrite   = 'w'
	tagRegDelete  = 'x'
	tagRegInsert  = 'n'
	tagRegOK      = 'O'
	tagRegFailed  = 'F'
	tagRegUnknown = 'U'
)

func isRegisterTag(c byte) bool {
	switch c {
	case tagRegWrite, tagRegDelete, tagRegInsert, tagRegOK, tagRegFailed, tagRegUnknown:
		return true
	}
	return false
}

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
	tag := byte(tagRegWrite)
	if del {
		tag = tagRegDelete
	}
	return l.register(tag, key)
}

// Inserting logs that register key, which does not exist yet, is about to
// be created, and returns the write's version (as Updating).
func (l *Log) Inserting(key int64) int64 { return l.register(tagRegInsert, key) }

func (l *Log) register(tag byte, key int64) int64 {
	v := int64(l.w.seg.Global(uint64(l.w.vers.Add(1)-1))) + 1
	t := l.w.micros()
	s := l.s
	s.mu.Lock()
	s.buf = appendRegLine(s.buf, tag, key, v, t, "")
	s.mu.Unlock()
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
			s.buf = appendRegLine(s.buf, tagRegOK, r.key, r.version, t, "")
		case Failed:
			s.buf = appendRegLine(s.buf, tagRegFailed, r.key, r.version, t, class.String())
		default:
			s.buf = appendRegLine(s.buf, tagRegUnknown, r.key, r.version, t, class.String())
		}
	}
	s.mu.Unlock()
	l.regs = l.regs[:0]
}

func appendRegLine(b []byte, tag byte, key, version, t int64, class string) []byte {
	b = append(b, tag, ' ')
	b = strconv.AppendInt(b, key, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, version, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, t, 10)
	if class != "" {
		b = append(b, ' ')
		b = append(b, class...)
	}
	return append(b, '\n')
}

// parseRegister parses a register line; regs maps versions to their
// index in h.Registers.
func (h *History) parseRegister(line []byte, regs map[int64]int) error {
	var fields [6][]byte
	nf := 0
	for rest := line; len(rest) > 0 && nf < len(fields); {
		var f []byte
		f, rest = nextField(rest)
		if len(f) > 0 {
			fields[nf] = f
			nf++
		}
	}
	if nf < 4 || nf > 5 || len(fields[0]) != 1 {
		return fmt.Errorf("%q: want TAG KEY VERSION TIME [CLASS] with TAG one of w, x, O, F, U", line)
	}
	key, ok1 := parseInt(fields[1])
	ver, ok2 := parseInt(fields[2])
	t, ok3 := parseInt(fields[3])
	if !ok1 || !ok2 || !ok3 || ver <= 0 || t < 0 {
		return fmt.Errorf("%q: KEY, VERSION (positive) and TIME (microseconds) must be integers", line)
	}
	tag := fields[0][0]
	if tag == tagRegWrite || tag == tagRegDelete || tag == tagRegInsert {
		if _, dup := regs[ver]; dup {
			return fmt.Errorf("%q: version %d invoked twice", line, ver)
		}
		regs[ver] = len(h.Registers)
		h.Registers = append(h.Registers, RegWrite{Key: key, Version: ver, Inv: t, End: math.MaxInt64, Delete: tag == tagRegDelete, Insert: tag == tagRegInsert, Outcome: Invoked})
		return nil
	}
	i, ok := regs[ver]
	if !ok || h.Registers[i].Key != key || h.Registers[i].Outcome != Invoked {
		return fmt.Errorf("%q: outcome of register %d version %d that was not invoked", line, key, ver)
	}
	r := &h.Registers[i]
	switch tag {
	case tagRegOK:
		r.Outcome, r.End = OK, t
	case tagRegFailed:
		r.Outcome, r.End = Failed, t
	default:
		r.Outcome = Unknown // End stays open: it may be applied at any time
	}
	if nf > 4 {
		r.Class = classNamed(string(fields[4]))
	}
	return nil
}
