package logs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/scenario"
)

// The acknowledged-write audit (docs/audit.md): logs.write and
// logs.write_bulk log every record id they write; the audit reads the
// records back by id afterwards. Freshness-probe records (negative ids)
// are not audited.

var (
	_ scenario.Audited    = (*Session)(nil)
	_ scenario.ReadBacker = (*Workload)(nil)
)

// SetWriteLog makes the session log the record ids it writes.
func (s *Session) SetWriteLog(l scenario.WriteLog) { s.wlog = l }

// readBacker is the optional capability of a store to report which record
// ids it holds (from the primary, which has every acknowledged write).
type readBacker interface {
	readBack(ctx context.Context, ids []int64, present []bool) error
}

// ReadBack reports which of the record ids the store holds.
func (w *Workload) ReadBack(ctx context.Context, ids []int64, present []bool) error {
	rb, ok := w.st.(readBacker)
	if !ok {
		return fmt.Errorf("logs: reading records back: %w", errors.ErrUnsupported)
	}
	if len(ids) == 0 {
		return nil
	}
	return rb.readBack(ctx, ids, present)
}

// markFound sets present[i] to whether ids[i] is among the ids of rows,
// a query's rows of one id each.
func markFound(rows sqlRows, ids []int64, present []bool) error {
	found := make(map[int64]bool, len(ids))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("read back records: %w", err)
		}
		found[id] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read back records: %w", err)
	}
	markPresent(ids, present, found)
	return nil
}

// markPresent sets present[i] for every ids[i] in found.
func markPresent(ids []int64, present []bool, found map[int64]bool) {
	for i, id := range ids {
		present[i] = found[id]
	}
}

func (s *sqliteStore) readBack(ctx context.Context, ids []int64, present []bool) error {
	q := "SELECT id FROM " + table + " WHERE id IN (?" + strings.Repeat(",?", len(ids)-1) + ")"
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("read back records: %w", err)
	}
	defer rows.Close()
	return markFound(rows, ids, present)
}

func (s *pgStore) readBack(ctx context.Context, ids []int64, present []bool) error {
	rows, err := s.c.Primary().Query(ctx, "SELECT id FROM logs WHERE id = ANY($1)", ids)
	if err != nil {
		return fmt.Errorf("read back records: %w", err)
	}
	defer rows.Close()
	return markFound(rows, ids, present)
}

func (s *searchStore) readBack(ctx context.Context, ids []int64, present []bool) error {
	docs := make([]search.DocRef, len(ids))
	for i, id := range ids {
		docs[i] = search.DocRef{Index: s.index, ID: strconv.FormatInt(id, 10)}
	}
	return s.c.Found(ctx, docs, present)
}
