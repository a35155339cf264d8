package ycsb

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
)

// A cache in front of the store (package cache; docs/scenarios/ycsb.md,
// "A cache in front of the store"). cache.mode says where: off, local (an
// LRU in this process shared by the run's sessions) or shared (the cache
// tier, --cache ENGINE, through engine.KV: namespace "ycsb", a fresh
// generation per run). Reads try the cache; a hit decodes the record (all
// fields) and returns the fields asked for; a miss reads every field from
// the store and fills the cache (cache.ttl). Updates and
// read-modify-writes write the store, then drop the key from the cache
// (cache.write=invalidate) or store the new record in it (through).
// Inserts and scans go to the store only; the audit reads the store,
// never the cache.

var (
	_ scenario.TierUser = (*Scenario)(nil)
	_ scenario.Reporter = (*Workload)(nil)
)

// cacheNamespace is ycsb's namespace in a shared cache.
const cacheNamespace = "ycsb"

// Tiers declares the cache tier.
func (*Scenario) Tiers() []scenario.TierSpec {
	return []scenario.TierSpec{{Role: scenario.RoleCache,
		Description: "a read-through cache (a key-value cache: redis, memcached or memory): reads try it first, a miss reads the store and fills it; updates write the store, then drop the key from the cache (cache.write=invalidate) or store the new record in it (through)"}}
}

// openCache opens the cache cache.mode asks for (nil for off), checking
// stale reads unless the values are too short to carry a version
// (staleLen).
func openCache(ctx context.Context, env scenario.Env, cfg *config) (*kit.VersionedCache, error) {
	return kit.OpenVersionedCache(ctx, env, Name, cacheNamespace, cfg.fieldLength >= staleLen)
}

// encodeRecord appends a cache entry of vals to dst: the field count, then
// each field preceded by its length, as uvarints.
func encodeRecord(dst []byte, vals [][]byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(vals)))
	for _, v := range vals {
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	return dst
}

// decodeRecord copies the fields of a cache entry into full (nf fields).
func decodeRecord(b []byte, full [][]byte) error {
	n, k := binary.Uvarint(b)
	if k <= 0 || n != uint64(len(full)) {
		return fmt.Errorf("%w: a cache entry of %d fields, want %d", engine.ErrIntegrity, n, len(full))
	}
	b = b[k:]
	for f := range full {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return fmt.Errorf("%w: field %d of a cache entry is cut short", engine.ErrIntegrity, f)
		}
		full[f], b = append(full[f][:0], b[k:k+int(l)]...), b[k+int(l):]
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: a cache entry has bytes after its last field", engine.ErrIntegrity)
	}
	return nil
}

// cachedGet reads s.key through the cache: the record's fields into
// s.full, the fields asked for into s.res. A failing cache is bypassed
// (the store answers, nothing is filled) unless cache.on_error=fail.
func (s *Session) cachedGet(ctx context.Context) error {
	c := s.w.cache
	if s.full == nil {
		s.full = make([][]byte, s.nf)
	}
	s.fullOK = false
	whole, err := c.Read(ctx, string(s.key), &s.ev, func(b []byte) error { return decodeRecord(b, s.full) },
		func() ([]byte, bool, error) { return s.loadRecord(ctx) })
	if err != nil || !whole {
		return err
	}
	s.fullOK = true
	s.ev.Stale = s.stale()
	s.res.Reset(s.nf)
	i := s.res.Add(s.key)
	if s.field >= 0 {
		s.res.Set(i, s.field, s.full[s.field])
		return nil
	}
	for f, v := range s.full {
		s.res.Set(i, f, v)
	}
	return nil
}

// loadRecord reads every field of s.key from the store into s.full and
// encodes them for the cache; a record the store returns in part is
// returned as it is (in s.res), not cached.
func (s *Session) loadRecord(ctx context.Context) ([]byte, bool, error) {
	s.res.Reset(s.nf)
	if err := s.ev.TimeStore(func() error { return s.st.Get(ctx, s.key, engine.AllFields, &s.res) }); err != nil {
		return nil, false, err
	}
	for f := range s.full {
		v, ok := s.res.Value(0, f)
		if !ok {
			return nil, false, nil
		}
		s.full[f] = append(s.full[f][:0], v...)
	}
	s.enc = encodeRecord(s.enc[:0], s.full)
	return s.enc, true, nil
}

// afterWrite brings the cache up to date with the update of s.key just
// acknowledged by the store: it drops the key (invalidate), or stores the
// new record (through). A through write of some fields needs the rest of
// the record: from the read of a read-modify-write, else from the cached
// entry (get, change, set); when the cache holds none there is nothing to
// change, and the next read fills it from the store.
func (s *Session) afterWrite(ctx context.Context) {
	c := s.w.cache
	key := string(s.key)
	if !c.Through() {
		_ = c.Invalidate(ctx, key, &s.ev) // a failure is counted
		return
	}
	if s.full == nil {
		s.full = make([][]byte, s.nf)
	}
	switch {
	case s.wfield < 0:
		for f, v := range s.vals {
			s.full[f] = append(s.full[f][:0], v...)
		}
	case s.op == OpReadModifyWrite && s.fullOK:
		s.full[s.wfield] = append(s.full[s.wfield][:0], s.vals[s.wfield]...)
	default:
		if !c.Cached(ctx, key, &s.ev, func(b []byte) error { return decodeRecord(b, s.full) }) {
			return
		}
		s.full[s.wfield] = append(s.full[s.wfield][:0], s.vals[s.wfield]...)
	}
	s.enc = encodeRecord(s.enc[:0], s.full)
	_ = c.Store(ctx, key, s.enc, &s.ev) // a failure is counted
}

// Report gives the cache's figures under "cache" (nothing without a
// cache): cache.Aside.Report's.
func (w *Workload) Report() map[string]any {
	if w.cache == nil {
		return nil
	}
	return map[string]any{"cache": w.cache.Report()}
}
