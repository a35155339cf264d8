package ycsb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
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
	_ scenario.RegisterKeyer  = (*Workload)(nil)
)

// RegisterKey is the key number of register reg (key number x fields +
// field).
func (w *Workload) RegisterKey(reg int64) int64 { return reg / int64(w.cfg.fields) }

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

// ReadVersions reports the version each updated field holds (-1 when its
// record is missing), reading the records back through the collection's
// read-back (the primary, no injected faults).
func (w *Workload) ReadVersions(ctx context.Context, regs []int64, versions []int64) error {
	nf := int64(w.cfg.fields)
	keys := make([][]byte, len(regs))
	idx := make(map[string]int, len(regs))
	for i, r := range regs {
		keys[i] = appendKey(nil, uint64(r/nf), w.cfg.ordered)
		idx[string(keys[i])] = 0
	}
	uniq := make([][]byte, 0, len(idx))
	for i := range keys {
		if idx[string(keys[i])] == 0 {
			idx[string(keys[i])] = -1
			uniq = append(uniq, keys[i])
		}
	}
	var rows engine.Rows
	rows.Reset(int(nf))
	if err := w.st.ReadBack(ctx, uniq, engine.AllFields, &rows); err != nil {
		return fmt.Errorf("ycsb: reading fields back: %w", err)
	}
	for i := range rows.Len() {
		idx[string(rows.Key(i))] = i
	}
	for i, r := range regs {
		row, field := idx[string(keys[i])], int(r%nf)
		if row < 0 {
			versions[i] = -1
			continue
		}
		v, ok := rows.Value(row, field)
		if !ok {
			versions[i] = -1
			continue
		}
		versions[i] = versionOf(v)
	}
	return nil
}

// ReadBack reports which of the key numbers the store holds.
func (w *Workload) ReadBack(ctx context.Context, ids []int64, present []bool) error {
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = appendKey(nil, uint64(id), w.cfg.ordered)
	}
	var rows engine.Rows
	rows.Reset(w.cfg.fields)
	if err := w.st.ReadBack(ctx, keys, 0, &rows); err != nil {
		return fmt.Errorf("ycsb: reading keys back: %w", err)
	}
	found := make(map[string]bool, rows.Len())
	for i := range rows.Len() {
		found[string(rows.Key(i))] = true
	}
	for i, k := range keys {
		present[i] = found[string(k)]
	}
	return nil
}
