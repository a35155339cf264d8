// Package audit is scalelab's acknowledged-write audit: every write an
// audited session makes is logged, before it is sent and again when it
// returns, in a streamed, crash-safe binary history file in the results
// directory, and checked as it completes (only what can still decide a
// verdict is kept); after the run the checker reads every written item
// and register back and reports the writes the store lost (docs/audit.md).
package audit

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/segment"
)

// Header is the first line of a history file written by this build: a
// binary history (format.go) after a line of text that says what it is.
const Header = HeaderV3

// Headers of the text histories of earlier builds, read all the same (text.go).
const (
	headerV2 = "# scalelab write history v2"
	headerV1 = "# scalelab write history v1"
)

// flushEvery is how often buffered records are written (one block per
// shard, one write call each) and fed to the live check; syncEvery how
// often the file is fsynced (little is left to write and sync when the
// run stops).
const (
	flushEvery = 100 * time.Millisecond
	syncEvery  = time.Second
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

// Writer streams a run's history file and checks it as it goes. Sessions
// log through a Log each; records go to one of a few locked buffers,
// written as whole blocks by a background goroutine every 100 ms and
// fsynced every second, so a crash of the machine loses at most the last
// second (the death of the process alone, the last 100 ms), and the file
// never holds a torn block except possibly its last.
// Each block written is also decoded into the History the read-back uses,
// so the check after the run does not read the file again.
type Writer struct {
	f      *os.File
	shards []shard
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex // serialises flushes
	spare  []byte
	hdr    []byte
	err    error
	synced time.Time
	start  time.Time    // register times count from here
	vers   atomic.Int64 // register versions handed out
	base   int64        // the first register version is base + 1
	seg    segment.Segment
	dec    *decoder
	zip    *zstd.Encoder
	packed []byte
	hist   *History
	bytes  atomic.Int64 // written to the file
}

// SetSegment makes the register versions this writer hands out unique
// among the segments of a divided test: the k-th version (from 1) of
// segment I of N is base + (k-1)*N + I + 1, base a multiple of N. Call
// it before the first write.
func (w *Writer) SetSegment(s segment.Segment) {
	w.seg = s
	w.base -= w.base % int64(s.N())
}

type shard struct {
	mu     sync.Mutex
	buf    []byte
	d      deltas
	counts LiveCounts
	_      [48]byte // keep shards on separate cache lines
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

// versionBits is how many low bits of a register version count the
// writes of a run; the bits above hold the milliseconds since 2025 at
// which the history began. A run hands out fewer than 4 M versions a
// millisecond, so a later run's versions are all greater than an earlier
// run's: a register holding a greater version than any its run wrote was
// overwritten since (CheckRegisters).
const versionBits = 22

var versionEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// VersionBase is the register version base of a history begun at t.
func VersionBase(t time.Time) int64 {
	ms := t.Sub(versionEpoch).Milliseconds()
	return max(ms, 0) << versionBits
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
	now := time.Now()
	h := newHistory()
	w := &Writer{f: f, shards: make([]shard, shards), stop: make(chan struct{}), done: make(chan struct{}), synced: now, start: now,
		base: VersionBase(now), hist: h, dec: newDecoder(h.addSpan, h.addRegister), zip: newCompressor()}
	w.bytes.Store(int64(len(Header) + 1))
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

// flush writes every shard's buffered records as one block each, feeds
// them to the live check and syncs when due (or when force is set).
func (w *Writer) flush(force bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.shards {
		w.flushShard(&w.shards[i])
	}
	if w.err == nil && (force || time.Since(w.synced) >= syncEvery) {
		w.synced = time.Now()
		if err := w.f.Sync(); err != nil {
			w.err = fmt.Errorf("sync %s: %w", w.f.Name(), err)
		}
	}
}

// flushShard writes one shard's records as a block and feeds them to the
// live check; w.mu is held.
func (w *Writer) flushShard(s *shard) {
	s.mu.Lock()
	buf := s.buf
	s.buf = w.spare[:0]
	s.d = deltas{}
	s.mu.Unlock()
	if len(buf) > 0 {
		if w.err == nil {
			w.packed = w.zip.EncodeAll(buf, w.packed[:0])
			w.hdr = frame(w.hdr, w.packed)
			blk := append(w.hdr, w.packed...)
			if _, err := w.f.Write(blk); err != nil {
				w.err = fmt.Errorf("write %s: %w", w.f.Name(), err)
			}
			w.bytes.Add(int64(len(blk)))
			w.hdr = blk[:0]
		}
		if err := w.dec.payload(buf); err != nil && w.err == nil {
			w.err = fmt.Errorf("check %s: %w", w.f.Name(), err)
		}
	}
	w.spare = buf[:0]
}

// shardLimit is the most a shard buffers: a session that fills it writes
// and checks the shard's records itself before going on, so that the
// audit slows a store faster than it can check down rather than buffer
// without bound.
const shardLimit = 1 << 20

// full is called by a session after it appended to s: past shardLimit, it
// flushes s itself.
func (w *Writer) full(s *shard, n int) {
	if n < shardLimit {
		return
	}
	w.mu.Lock()
	w.flushShard(s)
	w.mu.Unlock()
}

// Close stops the flusher, writes what is buffered, syncs and closes the
// file. It returns the first write error. Logs must not be used after.
func (w *Writer) Close() error {
	close(w.stop)
	<-w.done
	w.flush(true)
	w.dec.finish()
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("close %s: %w", w.f.Name(), err)
	}
	return w.err
}

// History is what the writer's live check knows: after Close, every write
// logged, the ones still in flight counted as Invoked.
func (w *Writer) History() *History { return w.hist }

// Size is the number of bytes written to the history file so far.
func (w *Writer) Size() int64 { return w.bytes.Load() }

// Log returns the log of one session (used by one goroutine); id picks
// the shard its records go to.
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
	s.buf = appendItemRec(s.buf, &s.d, kindItemInvoked, 0, first, n)
	s.counts.Invoked += int64(n)
	size := len(s.buf)
	s.mu.Unlock()
	l.w.full(s, size)
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
			s.buf = appendItemRec(s.buf, &s.d, kindItemOK, 0, p.first, p.n)
			s.counts.OK += int64(p.n)
		case Failed:
			s.buf = appendItemRec(s.buf, &s.d, kindItemFailed, class, p.first, p.n)
			s.counts.Failed += int64(p.n)
		default:
			s.buf = appendItemRec(s.buf, &s.d, kindItemUnknown, class, p.first, p.n)
			s.counts.Unknown += int64(p.n)
		}
	}
	size := len(s.buf)
	s.mu.Unlock()
	l.pending = l.pending[:0]
	l.w.full(s, size)
}

// ErrNoHistory is returned by Read when the results directory has no
// history file (auditing was off, or the scenario is not audited).
var ErrNoHistory = errors.New("no write history")
