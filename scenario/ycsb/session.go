package ycsb

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
)

// Request distribution kinds, resolved once per session.
const (
	distUniform = iota
	distZipfian
	distLatest
	distHotspot
)

var distKinds = map[string]int{"uniform": distUniform, "zipfian": distZipfian, "latest": distLatest, "hotspot": distHotspot}

// Session is one virtual user of a ycsb workload. It owns its random
// generator and buffers: Next and Do allocate nothing on the null engine
// unless an operation fails.
type Session struct {
	w        *Workload
	st       engine.Collection
	r        kit.RNG
	dist     int
	nf       int            // fields per record
	quota    kit.SessionOps // operations done, against ycsb.session_ops
	prepared bool
	op       int
	key      []byte
	keynum   uint64 // key number of the prepared read, update or scan
	field    int    // field read (-1 every field)
	wfield   int    // field written (-1 every field)
	scanN    int
	vals     [][]byte // values to write, by field; made on the first write
	want     []byte   // expected value, when verifying
	res      engine.Rows
	wf       [1]int // the field written, as Update takes it
	latest   skewedLatest
	keyBuf   [32]byte             // holds every key name: "user" + at most 20 digits
	wlog     scenario.WriteLog    // acknowledged-write audit (audit.go); nil when off
	rlog     scenario.RegisterLog // the audit's log of updated fields; nil when off

	// With a cache (cache.go, stale.go): what the cache did for the
	// operation, the record read or written (every field), whether full
	// holds the current key's record, the encoded entry, the session's
	// last acknowledged write per key and the version and floor of the
	// write in flight.
	ev      cache.Event
	full    [][]byte
	fullOK  bool
	enc     []byte
	written map[uint64]lastWrite
	wver    uint64
	wfloor  uint64
}

var _ scenario.Session = (*Session)(nil)

// NewSession returns a session whose choices derive from seed alone.
func (w *Workload) NewSession(id uint64, seed uint64) scenario.Session {
	return w.newSession(seed)
}

func (w *Workload) newSession(seed uint64) *Session {
	// One allocation for a read-only session: sessions may be short (see
	// ycsb.session_ops) and the load model starts new ones all the time.
	s := &Session{
		w:     w,
		st:    w.st,
		r:     kit.NewRNG(seed),
		dist:  distKinds[w.cfg.dist],
		nf:    w.cfg.fields,
		quota: kit.NewSessionOps(w.cfg.sessionOps),
	}
	s.key = s.keyBuf[:0]
	if s.dist == distLatest {
		s.latest = newSkewedLatest(w.ctr, w.latestZeta)
	}
	return s
}

// Next chooses the next operation and its key, fields and values; it
// returns ok=false once the session has done ycsb.session_ops operations.
func (s *Session) Next() (op int, ok bool) {
	if !s.quota.Take() {
		return 0, false
	}
	op = s.w.ops.Next(&s.r)
	s.op, s.prepared = op, true
	switch op {
	case OpRead:
		s.pickKey()
		s.field = s.pickField(s.w.cfg.readAll)
	case OpUpdate:
		s.pickKey()
		s.wfield = s.pickField(s.w.cfg.writeAll)
		s.buildValues(s.wfield)
	case OpScan:
		s.pickKey()
		s.field = s.pickField(s.w.cfg.readAll)
		if s.w.cfg.scanDist == "zipfian" {
			s.scanN = 1 + int(s.w.scanZipf.Next(&s.r))
		} else {
			s.scanN = int(s.w.scanUniform.next(&s.r))
		}
	case OpReadModifyWrite:
		s.pickKey()
		s.field = s.pickField(s.w.cfg.readAll)
		s.wfield = s.pickField(s.w.cfg.writeAll)
		s.buildValues(s.wfield)
	case OpInsert:
		// The key number is taken in Do, so that an operation prepared but
		// never done cannot hold back the acknowledged-insert counter.
	}
	return op, true
}

// errNotPrepared is returned by Do without a preceding Next.
var errNotPrepared = errors.New("ycsb: Session.Do called without Next")

// Do performs the operation Next prepared. Errors name the operation and
// key and keep the engine's class; with ycsb.verify a wrong value wraps
// engine.ErrIntegrity.
func (s *Session) Do(ctx context.Context) error {
	if !s.prepared {
		return errNotPrepared
	}
	s.prepared = false
	s.ev = cache.Event{}
	var err error
	switch s.op {
	case OpRead:
		err = s.read(ctx)
	case OpUpdate:
		s.version()
		err = s.write(ctx)
	case OpInsert:
		err = s.insert(ctx)
	case OpScan:
		s.res.Reset(s.nf)
		if err = s.st.Scan(ctx, s.key, s.scanN, s.field, &s.res); err == nil && s.w.cfg.verify {
			err = s.verify(true)
		}
	case OpReadModifyWrite:
		if err = s.read(ctx); err == nil {
			s.version()
			err = s.write(ctx)
		}
	}
	if c := s.w.cache; c != nil && s.op != OpInsert && s.op != OpScan {
		c.Stats.Record(operationNames[s.op], s.ev)
	}
	if err != nil {
		return fmt.Errorf("ycsb %s %s: %w", operationNames[s.op], s.key, err)
	}
	return nil
}

func (s *Session) read(ctx context.Context) error {
	s.res.Reset(s.nf)
	var err error
	if s.w.cache != nil {
		err = s.cachedGet(ctx)
	} else {
		err = s.st.Get(ctx, s.key, s.field, &s.res)
	}
	if err != nil {
		// A loaded record must exist: with verify, its absence is a lost
		// write. Inserted keys may be missing because their insert failed
		// (YCSB acknowledges failed inserts), so they stay not_found.
		if s.w.cfg.verify && s.w.cfg.load && s.keynum < s.w.cfg.records && errors.Is(err, engine.ErrNotFound) {
			return fmt.Errorf("%w: loaded record %s is missing (%v)", engine.ErrIntegrity, s.key, err)
		}
		return err
	}
	if s.w.cfg.verify {
		return s.verify(false)
	}
	return nil
}

// write sends the prepared update to the store, then, with a cache,
// brings the cache up to date (cache.go) once the store acknowledged it.
func (s *Session) write(ctx context.Context) error {
	if s.w.cache == nil {
		return s.update(ctx)
	}
	s.stampWrite()
	t := time.Now()
	err := s.update(ctx)
	s.ev.Store += time.Since(t)
	s.ev.StoreCalls++
	s.endWrite(err == nil)
	if err == nil {
		s.afterWrite(ctx)
	}
	return err
}

// update writes the prepared field (every field when wfield < 0).
func (s *Session) update(ctx context.Context) error {
	if s.wfield < 0 {
		return s.st.Update(ctx, s.key, nil, s.vals)
	}
	s.wf[0] = s.wfield
	return s.st.Update(ctx, s.key, s.wf[:], s.vals)
}

func (s *Session) insert(ctx context.Context) error {
	k := s.w.ctr.Take()
	s.keynum = s.w.keynumOf(k)
	s.key = appendKey(s.key[:0], s.keynum, s.w.cfg.ordered)
	s.buildValues(-1)
	if s.wlog != nil {
		s.wlog.Writing(int64(s.keynum), 1)
	}
	err := s.st.Insert(ctx, s.key, s.vals)
	// Acknowledge even a failed insert, as YCSB does, so that the counter
	// moves on; reads of that key then find nothing.
	s.w.ctr.Ack(k)
	return err
}

// pickKey chooses the key of a read, update, scan or read-modify-write from
// the request distribution, among keys whose insert is acknowledged.
func (s *Session) pickKey() {
	s.keynum = s.w.keynumOf(s.nextKeynum())
	s.key = appendKey(s.key[:0], s.keynum, s.w.cfg.ordered)
}

// keynumOf maps a number of the insert counter to a key number: the same
// in a whole test; in a segment of a divided test, the numbers past the
// loaded records fall in the segment's own range (segment.Segment.Key),
// so that segments never insert the same key.
func (w *Workload) keynumOf(c uint64) uint64 {
	if !w.seg.Split() || c < w.cfg.records {
		return c
	}
	return uint64(w.seg.Key(int64(w.cfg.records), int64(c-w.cfg.records)))
}

func (s *Session) nextKeynum() uint64 {
	if s.dist == distLatest {
		return s.latest.next(&s.r)
	}
	last := s.w.ctr.Last()
	for tries := 0; ; tries++ {
		var k uint64
		switch s.dist {
		case distZipfian:
			k = s.w.keyScrambled.next(&s.r)
		case distHotspot:
			k = s.w.keyHotspot.next(&s.r)
		default:
			k = s.w.keyUniform.next(&s.r)
		}
		if k <= last {
			return k
		}
		if tries == 1000 { // the key space is far ahead of the inserts
			return k % (last + 1)
		}
	}
}

// pickField returns -1 when all is true, else a uniformly chosen field.
func (s *Session) pickField(all bool) int {
	if all {
		return -1
	}
	return int(s.r.Intn(uint64(s.nf)))
}

// buildValues fills the value buffer of field (every field when < 0) for
// the current key.
func (s *Session) buildValues(field int) {
	if s.vals == nil {
		s.vals = make([][]byte, s.nf)
	}
	if field >= 0 {
		s.buildValue(field)
		return
	}
	for f := range s.nf {
		s.buildValue(f)
	}
}

func (s *Session) buildValue(f int) {
	cfg := s.w.cfg
	if cfg.verify {
		s.vals[f] = appendDeterministicValue(s.vals[f][:0], s.key, s.w.fieldNames[f], cfg.fieldLength)
	} else {
		s.vals[f] = appendRandomValue(s.vals[f][:0], &s.r, cfg.fieldLength)
	}
}

// verify checks the rows in s.res: each requested field holds the value
// derived from its key, and a scan's keys ascend from the start key.
func (s *Session) verify(scan bool) error {
	res := &s.res
	if !scan && res.Len() != 1 {
		return fmt.Errorf("%w: read returned %d rows", engine.ErrIntegrity, res.Len())
	}
	for i := 0; i < res.Len(); i++ {
		key := res.Key(i)
		if scan {
			if i == 0 && bytes.Compare(key, s.key) < 0 {
				return fmt.Errorf("%w: scan from %s returned %s first", engine.ErrIntegrity, s.key, key)
			}
			if i > 0 && bytes.Compare(res.Key(i-1), key) >= 0 {
				return fmt.Errorf("%w: scan returned %s after %s", engine.ErrIntegrity, key, res.Key(i-1))
			}
		} else if !bytes.Equal(key, s.key) {
			return fmt.Errorf("%w: read of %s returned key %s", engine.ErrIntegrity, s.key, key)
		}
		lo, hi := 0, s.nf
		if s.field >= 0 {
			lo, hi = s.field, s.field+1
		}
		for f := lo; f < hi; f++ {
			v, ok := res.Value(i, f)
			name := s.w.fieldNames[f]
			if !ok {
				return fmt.Errorf("%w: key %s: %s missing", engine.ErrIntegrity, key, name)
			}
			s.want = appendDeterministicValue(s.want[:0], key, name, s.w.cfg.fieldLength)
			if !sameValue(v, s.want) {
				return fmt.Errorf("%w: key %s: %s is %q, want %q", engine.ErrIntegrity, key, name, clip(v), clip(s.want))
			}
		}
	}
	return nil
}

// clip shortens a value for an error message.
func clip(b []byte) []byte {
	if len(b) > 40 {
		return append(b[:40:40], "..."...)
	}
	return b
}
