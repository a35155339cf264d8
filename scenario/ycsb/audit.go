package ycsb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/readback"
)

// The acknowledged-write audit (docs/audit.md): ycsb.insert logs the key
// number of every record it inserts, and the audit reads the keys back
// afterwards. Every field an update or read-modify-write writes is a
// register (key number x fields + field): the write's version goes into
// the value's first bytes ("~v" + 16 hex digits + "~", the rest of the
// value as usual), and the audit reads each written field back and checks
// its version against the history.

var (
	_ scenario.Audited        = (*Session)(nil)
	_ scenario.ReadBacker     = (*Workload)(nil)
	_ scenario.RegisterReader = (*Workload)(nil)
)

// versionLen is the length of a value's version prefix; fields shorter
// than versionLen+1 bytes carry no version and updates are not audited.
const versionLen = 19

// SetWriteLog makes the session log the key numbers it inserts and, when
// the fields are long enough to carry a version, the fields it updates.
func (s *Session) SetWriteLog(l scenario.WriteLog) {
	s.wlog = l
	if rl, ok := l.(scenario.RegisterLog); ok && s.w.cfg.fieldLength > versionLen {
		s.rlog = rl
	}
}

// version logs the update the session is about to send (every field it
// writes) and stamps each value with its version.
func (s *Session) version() {
	if s.rlog == nil {
		return
	}
	lo, hi := s.wfield, s.wfield+1
	if s.wfield < 0 {
		lo, hi = 0, s.nf
	}
	for f := lo; f < hi; f++ {
		v := s.rlog.Updating(int64(s.keynum)*int64(s.nf)+int64(f), false)
		putVersion(s.vals[f], v)
	}
}

// putVersion overwrites the first versionLen bytes of val with version v.
func putVersion(val []byte, v int64) {
	const hex = "0123456789abcdef"
	val[0], val[1], val[versionLen-1] = '~', 'v', '~'
	for i := 17; i >= 2; i-- {
		val[i] = hex[v&15]
		v >>= 4
	}
}

// versionOf returns the version a value carries, or 0 (audit.Initial) for
// a value written without one.
func versionOf(val []byte) int64 {
	if len(val) < versionLen || val[0] != '~' || val[1] != 'v' || val[versionLen-1] != '~' {
		return 0
	}
	v, err := strconv.ParseInt(string(val[2:versionLen-1]), 16, 64)
	if err != nil {
		return 0
	}
	return v
}

// auditReader is the optional capability of a store to read a record for
// the audit past the faults it injects (the memory engine).
type auditReader interface {
	readForAudit(ctx context.Context, key []byte, field int, res *result) error
}

// ReadVersions reports the version each updated field holds (-1 when its
// record is missing), reading each record's field through the store.
func (w *Workload) ReadVersions(ctx context.Context, regs []int64, versions []int64) error {
	if _, ok := w.st.(keyReader); !ok {
		return fmt.Errorf("ycsb: reading fields back: %w", errors.ErrUnsupported) // a store that keeps nothing
	}
	read := w.st.read
	if ar, ok := w.st.(auditReader); ok {
		read = ar.readForAudit
	}
	nf := int64(w.cfg.fields)
	var res result
	var key []byte
	for i, r := range regs {
		keynum, field := r/nf, int(r%nf)
		key = appendKey(key[:0], uint64(keynum), w.cfg.ordered)
		res.reset(int(nf))
		err := read(ctx, key, field, &res)
		switch {
		case errors.Is(err, engine.ErrNotFound):
			versions[i] = -1
			continue
		case err != nil:
			return fmt.Errorf("read back %s field%d: %w", key, field, err)
		}
		if res.rows != 1 || !res.present[field] {
			versions[i] = -1
			continue
		}
		versions[i] = versionOf(res.vals[field])
	}
	return nil
}

// keyReader is the optional capability of a store to report which keys it
// holds (from the primary, where there are replicas).
type keyReader interface {
	readKeys(ctx context.Context, keys []string, present []bool) error
}

// ReadBack reports which of the key numbers the store holds.
func (w *Workload) ReadBack(ctx context.Context, ids []int64, present []bool) error {
	kr, ok := w.st.(keyReader)
	if !ok {
		return fmt.Errorf("ycsb: reading keys back: %w", errors.ErrUnsupported)
	}
	if len(ids) == 0 {
		return nil
	}
	keys := make([]string, len(ids))
	var buf []byte
	for i, id := range ids {
		buf = appendKey(buf[:0], uint64(id), w.cfg.ordered)
		keys[i] = string(buf)
	}
	return kr.readKeys(ctx, keys, present)
}

func markKeys(keys []string, present []bool, found map[string]bool) {
	for i, k := range keys {
		present[i] = found[k]
	}
}

func (m *memoryStore) readKeys(_ context.Context, keys []string, present []bool) error {
	for i, k := range keys {
		present[i] = m.c.Has(k)
	}
	return nil
}

func (s *sqliteStore) readKeys(ctx context.Context, keys []string, present []bool) error {
	q := "SELECT YCSB_KEY FROM " + sqliteTable + " WHERE YCSB_KEY IN (?" + strings.Repeat(",?", len(keys)-1) + ")"
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("read back keys: %w", err)
	}
	defer rows.Close()
	found := make(map[string]bool, len(keys))
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return fmt.Errorf("read back keys: %w", err)
		}
		found[k] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read back keys: %w", err)
	}
	markKeys(keys, present, found)
	return nil
}

func (s *pgStore) readKeys(ctx context.Context, keys []string, present []bool) error {
	rows, err := s.c.Primary().Query(ctx, "SELECT YCSB_KEY FROM usertable WHERE YCSB_KEY = ANY($1)", keys)
	if err != nil {
		return fmt.Errorf("read back keys: %w", err)
	}
	defer rows.Close()
	found := make(map[string]bool, len(keys))
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return fmt.Errorf("read back keys: %w", err)
		}
		found[k] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read back keys: %w", err)
	}
	markKeys(keys, present, found)
	return nil
}

func (s *searchStore) readKeys(ctx context.Context, keys []string, present []bool) error {
	docs := make([]readback.Doc, len(keys))
	for i, k := range keys {
		docs[i] = readback.Doc{Index: s.index, ID: k}
	}
	return readback.SearchFound(ctx, s.c, docs, present)
}
