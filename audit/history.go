// Package audit is scalelab's acknowledged-write audit: every write an
// audited session makes is logged, before it is sent and again when it
// returns, in a streamed, crash-safe history file in the results directory;
// after the run the checker reads every acknowledged write back and reports
// the writes the store lost (docs/audit.md).
package audit

import (
	"errors"
	"fmt"
	"github.com/scalelab/scalelab/segment"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/metrics"
)

// Header is the first line of a history file.
const Header = "# scalelab write history v2"

// headerV1 is the header of histories written before register writes
// (updates and deletes) were logged; they are read the same way.
const headerV1 = "# scalelab write history v1"

// Line format, one event per line, fields separated by one space:
//
//	i FIRST N          the write of items FIRST..FIRST+N-1 was invoked
//	o FIRST N          it was acknowledged
//	f FIRST N CLASS    it failed and is known not applied
//	u FIRST N CLASS    its outcome is unknown (it may or may not be applied)
//
// Updates and deletes of registers (a key whose value is overwritten in
// place) are logged with the version the write stores and the time in
// microseconds since the history began:
//
//	w KEY VERSION T          a write of VERSION to register KEY was invoked at T
//	n KEY VERSION T          a write creating register KEY (it did not exist before) was invoked at T
//	x KEY VERSION T          a delete of register KEY (numbered VERSION) was invoked at T
//	O KEY VERSION T          it was acknowledged at T
//	F KEY VERSION T CLASS    it failed and is known not applied
//	U KEY VERSION T CLASS    its outcome is unknown
//
// A session's invocation always precedes its outcome in the file.
const (
	tagInvoked = 'i'
	tagOK      = 'o'
	tagFailed  = 'f'
	tagUnknown = 'u'
)

// flushEvery is how often buffered lines are written (whole lines, one
// write call per shard); syncEvery how often the file is fsynced.
const (
	flushEvery = time.Second
	syncEvery  = 2 * time.Second
)

// Outcome is what became of an invoked write.
type Outcome uint8

// Outcomes of a write.
const (
	Invoked Outcome = iota // no outcome recorded (in flight when the process died)
	OK                     // acknowledged: the store must hold it
	Failed                 // known not applied
	Unknown                // may or may not be applied
)

var outcomeNames = [...]string{"invoked", "ok", "failed", "unknown"}

// String names the outcome.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "?"
}

// Classify decides the outcome of a write of n items whose Do returned
// err: nil is OK; a single-item write refused by the store with a class
// that means "not applied" (rejected: busy, overloaded, serialization
// failure, HTTP 429/503; not_found) is Failed; everything else (timeouts,
// refused or reset connections, cancellations, other errors, and any error
// of a multi-item write, which the store may have applied in part) is
// Unknown.
func Classify(err error, n int) (Outcome, metrics.Class) {
	c := metrics.ClassOf(err)
	switch {
	case c == metrics.OK:
		return OK, c
	case n == 1 && (c == metrics.Rejected || c == metrics.NotFound):
		return Failed, c
	}
	return Unknown, c
}

// Writer streams a run's history file. Sessions log through a Log each;
// lines go to one of a few locked buffers, written by a background
// goroutine every second and fsynced every two seconds, so a crash loses
// at most the last second and the file never holds a torn line except
// possibly its last.
type Writer struct {
	f      *os.File
	shards []shard
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex // serialises flushes
	spare  []byte
	err    error
	synced time.Time
	start  time.Time    // register times count from here
	vers   atomic.Int64 // the last register version handed out
	seg    segment.Segment
}

// SetSegment makes the register versions this writer hands out unique
// among the segments of a divided test: the k-th version (from 1) of
// segment I of N is (k-1)*N + I + 1. Call it before the first write.
func (w *Writer) SetSegment(s segment.Segment) { w.seg = s }

type shard struct {
	mu     sync.Mutex
	buf    []byte
	counts LiveCounts
	_      [8]byte // keep shards on separate cache lines
}

// LiveCounts are the items logged so far, by what happened to them: invoked
// (about to be written), then acknowledged, failed, or of unknown outcome.
type LiveCounts struct {
	Invoked, OK, Failed, Unknown int64
}

// LiveCounts sums what every session logged so far (read by the live
// figures; each shard's lock is already taken by its writers).
func (w *Writer) LiveCounts() LiveCounts {
	var c LiveCounts
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		c.Invoked += s.counts.Invoked
		c.OK += s.counts.OK
		c.Failed += s.counts.Failed
		c.Unknown += s.counts.Unknown
		s.mu.Unlock()
	}
	return c
}

// Create creates the history file at path (truncating any) and starts the
// flusher; shards is the number of locked buffers (at least 1).
func Create(path string, shards int) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create write history: %w", err)
	}
	if _, err := f.WriteString(Header + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("write history header: %w", err)
	}
	if shards < 1 {
		shards = 1
	}
	w := &Writer{f: f, shards: make([]shard, shards), stop: make(chan struct{}), done: make(chan struct{}), synced: time.Now(), start: time.Now()}
	go w.loop()
	return w, nil
}

func (w *Writer) loop() {
	defer close(w.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.flush(false)
		}
	}
}

// flush writes every shard's buffered lines and syncs when due (or when
// force is set).
func (w *Writer) flush(force bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.shards {
		s := &w.shards[i]
		s.mu.Lock()
		buf := s.buf
		s.buf = w.spare[:0]
		s.mu.Unlock()
		if len(buf) > 0 && w.err == nil {
			if _, err := w.f.Write(buf); err != nil {
				w.err = fmt.Errorf("write %s: %w", w.f.Name(), err)
			}
		}
		w.spare = buf[:0]
	}
	if w.err == nil && (force || time.Since(w.synced) >= syncEvery) {
		w.synced = time.Now()
		if err := w.f.Sync(); err != nil {
			w.err = fmt.Errorf("sync %s: %w", w.f.Name(), err)
		}
	}
}

// Close stops the flusher, writes what is buffered, syncs and closes the
// file. It returns the first write error. Logs must not be used after.
func (w *Writer) Close() error {
	close(w.stop)
	<-w.done
	w.flush(true)
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("close %s: %w", w.f.Name(), err)
	}
	return w.err
}

// Log returns the log of one session (used by one goroutine); id picks
// the shard its lines go to.
func (w *Writer) Log(id uint64) *Log {
	return &Log{s: &w.shards[id%uint64(len(w.shards))], w: w}
}

// Log records one session's writes: Writing (called by the session inside
// Do, before it sends a write) logs the invocation, Done (called by the
// runner when Do returns) the outcome of every write Do invoked.
type Log struct {
	s       *shard
	w       *Writer
	pending []span
	one     [1]span
	regs    []regPending
}

type span struct {
	first int64
	n     int
}

// Writing logs that the items first..first+n-1 are about to be written.
func (l *Log) Writing(first int64, n int) {
	if n <= 0 {
		return
	}
	if l.pending == nil {
		l.pending = l.one[:0]
	}
	l.pending = append(l.pending, span{first, n})
	s := l.s
	s.mu.Lock()
	s.buf = appendLine(s.buf, tagInvoked, first, n, "")
	s.counts.Invoked += int64(n)
	s.mu.Unlock()
}

// Done logs the outcome of the writes logged since the last Done, from the
// error Do returned; it does nothing when Do wrote nothing.
func (l *Log) Done(err error) {
	if len(l.regs) > 0 {
		l.doneRegisters(err)
	}
	if len(l.pending) == 0 {
		return
	}
	s := l.s
	s.mu.Lock()
	for _, p := range l.pending {
		out, class := Classify(err, p.n)
		switch out {
		case OK:
			s.buf = appendLine(s.buf, tagOK, p.first, p.n, "")
			s.counts.OK += int64(p.n)
		case Failed:
			s.buf = appendLine(s.buf, tagFailed, p.first, p.n, class.String())
			s.counts.Failed += int64(p.n)
		default:
			s.buf = appendLine(s.buf, tagUnknown, p.first, p.n, class.String())
			s.counts.Unknown += int64(p.n)
		}
	}
	s.mu.Unlock()
	l.pending = l.pending[:0]
}

func appendLine(b []byte, tag byte, first int64, n int, class string) []byte {
	b = append(b, tag, ' ')
	b = strconv.AppendInt(b, first, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(n), 10)
	if class != "" {
		b = append(b, ' ')
		b = append(b, class...)
	}
	return append(b, '\n')
}

// ErrNoHistory is returned by Read when the results directory has no
// history file (auditing was off, or the scenario is not audited).
var ErrNoHistory = errors.New("no write history")
