package social

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
)

// A cache in front of the users collection (package cache; the same
// settings and figures as ycsb's, docs/scenarios/social.md): users.read
// (the friend walk's profile reads among them) tries the cache; a hit
// decodes the user, a miss reads the store and fills the cache. A
// users.update writes the store, then drops the user from the cache
// (cache.write=invalidate) or changes the cached entry's status and
// last_seen (through: get, change, set; nothing when the cache holds
// none). A users.delete always drops the user from the cache. Inserts and
// scans go to the store only; the check after the run and the audit read
// the store.
//
// Stale reads: with a cache, an update appends " #c" and a version (base
// 36) to the status it writes, before the audit's own version. The
// versions come from one counter that knows the floor, the highest
// version such that every write up to it has ended; a session remembers,
// for the users it last updated (at most maxWritten), the version and the
// floor when the write began. A read of such a user whose status holds
// another version that is at most that floor returns what was there
// before the session's acknowledged update: a stale read.

var _ scenario.TierUser = (*Scenario)(nil)

// cacheNamespace is social's namespace in a shared cache.
const cacheNamespace = "social"

// maxWritten bounds the users a session remembers its last update of.
const maxWritten = 4096

// cacheMark separates a status from the version a cached run's update
// stamped into it.
const cacheMark = " #c"

// Tiers declares the cache tier.
func (*Scenario) Tiers() []scenario.TierSpec {
	return []scenario.TierSpec{{Role: scenario.RoleCache,
		Description: "a read-through cache of the users' profiles (a key-value cache: redis, memcached or memory): reads try it first, a miss reads the store and fills it; updates write the store, then drop the user from the cache (cache.write=invalidate) or change the cached profile (through); deletes drop it"}}
}

// openCache opens the run's cache of profiles that cache.mode asks for
// (nil for off), with the versions of the stale-read check.
func openCache(ctx context.Context, env scenario.Env) (*kit.VersionedCache, error) {
	return kit.OpenVersionedCache(ctx, env, Name, cacheNamespace, true)
}

// lastWrite is a session's last acknowledged update of a user.
type lastWrite struct{ ver, floor uint64 }

// cacheVersionIn returns the cache's version in a status, or 0.
func cacheVersionIn(status string) uint64 {
	i := strings.LastIndex(status, cacheMark)
	if i < 0 {
		return 0
	}
	rest, _, _ := strings.Cut(status[i+len(cacheMark):], " ")
	v, err := strconv.ParseUint(rest, 36, 64)
	if err != nil {
		return 0
	}
	return v
}

// encodeUser appends a cache entry of row 0 of rows: the field count, then
// each field as its length plus one (0: the store returned none) and its
// bytes.
func encodeUser(dst []byte, rows *engine.Rows) []byte {
	dst = binary.AppendUvarint(dst, numFields)
	for f := range numFields {
		v, ok := rows.Value(0, f)
		if !ok {
			dst = append(dst, 0)
			continue
		}
		dst = binary.AppendUvarint(dst, uint64(len(v))+1)
		dst = append(dst, v...)
	}
	return dst
}

// decodeUser makes b, a cache entry of key, row 0 of rows.
func decodeUser(b []byte, key string, rows *engine.Rows) error {
	rows.Reset(numFields)
	i := rows.AddString(key)
	n, k := binary.Uvarint(b)
	if k <= 0 || n != numFields {
		return fmt.Errorf("%w: a cache entry of %d fields, want %d", engine.ErrIntegrity, n, numFields)
	}
	b = b[k:]
	for f := range numFields {
		l, k := binary.Uvarint(b)
		if k <= 0 || (l > 0 && l-1 > uint64(len(b)-k)) {
			return fmt.Errorf("%w: field %s of a cache entry is cut short", engine.ErrIntegrity, userFields[f])
		}
		b = b[k:]
		if l > 0 {
			rows.Set(i, f, b[:l-1])
			b = b[l-1:]
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: a cache entry has bytes after its last field", engine.ErrIntegrity)
	}
	return nil
}

// cachedRead reads user s.key through the cache into s.u. A failing
// cache is bypassed (the store answers, nothing is filled) unless
// cache.on_error=fail.
func (s *Session) cachedRead(ctx context.Context) error {
	c := s.w.cache
	whole, err := c.Read(ctx, s.key, &s.ev, func(b []byte) error { return decodeUser(b, s.key, &s.rows) }, func() ([]byte, bool, error) {
		s.rows.Reset(numFields)
		if err := s.ev.TimeStore(func() error { return s.st.c.Get(ctx, []byte(s.key), engine.AllFields, &s.rows) }); err != nil {
			return nil, false, err
		}
		if s.rows.Len() == 0 { // a store that keeps nothing (null)
			return nil, false, nil
		}
		s.enc = encodeUser(s.enc[:0], &s.rows)
		return s.enc, true, nil
	})
	if err != nil {
		return err
	}
	if !whole {
		s.u = User{ID: s.key}
		return nil
	}
	if err := userFrom(&s.rows, 0, &s.u); err != nil {
		return err
	}
	if lw, ok := s.written[s.n]; ok {
		v := cacheVersionIn(s.u.Status)
		s.ev.Stale = v != lw.ver && v <= lw.floor
	}
	return nil
}

// cachedUpdate stamps the status with a version, updates the store and
// then the cache.
func (s *Session) cachedUpdate(ctx context.Context, status string) error {
	c := s.w.cache
	floor, ver := c.Versions.Last(), c.Versions.Take()
	status = status + cacheMark + strconv.FormatUint(ver, 36)
	if s.rlog != nil {
		status = stamped(status, s.rlog.Updating(int64(s.n), false))
	}
	err := s.ev.TimeStore(func() error { return s.st.update(ctx, s.key, status, s.lastSeen) })
	c.Versions.Ack(ver)
	if err != nil {
		return err
	}
	kit.Remember(&s.written, s.n, lastWrite{ver: ver, floor: floor}, maxWritten)
	if !c.Through() {
		s.invalidate(ctx)
		return nil
	}
	if !c.Cached(ctx, s.key, &s.ev, func(b []byte) error { return decodeUser(b, s.key, &s.rows) }) {
		return nil
	}
	s.rows.SetString(0, fStatus, status)
	s.rows.Set(0, fLastSeen, strconv.AppendInt(nil, s.lastSeen, 10))
	s.enc = encodeUser(s.enc[:0], &s.rows)
	_ = c.Store(ctx, s.key, s.enc, &s.ev) // a failure is counted
	return nil
}

// invalidate drops user s.key from the cache.
func (s *Session) invalidate(ctx context.Context) { _ = s.w.cache.Invalidate(ctx, s.key, &s.ev) }
