package ycsb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/readback"
)

// The acknowledged-write audit (docs/audit.md): ycsb.insert logs the key
// number of every record it inserts, and the audit reads the keys back
// afterwards. Updates are not audited: they overwrite fields of a record
// that exists anyway, and without a version stored with the record a read
// cannot tell whether an update was applied.

var (
	_ scenario.Audited    = (*Session)(nil)
	_ scenario.ReadBacker = (*Workload)(nil)
)

// SetWriteLog makes the session log the key numbers it inserts.
func (s *Session) SetWriteLog(l scenario.WriteLog) { s.wlog = l }

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
