package mhealth

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/readback"
)

// The acknowledged-write audit (docs/audit.md): activity.post logs every
// posted activity, named by its patient and start hour, and the audit
// reads the activities back afterwards. The other writes (plans, done
// marks, achievements) overwrite records in place and are checked by the
// sessions' own read-your-writes checks instead.

var (
	_ scenario.Audited    = (*Session)(nil)
	_ scenario.ReadBacker = (*Workload)(nil)
)

// SetWriteLog makes the session log the activities it posts.
func (s *Session) SetWriteLog(l scenario.WriteLog) { s.wlog = l }

// activityID names a patient's activity as an audit item: the patient in
// the high 32 bits, the start in seconds since the Unix epoch (simulated,
// whole hours) in the low 32.
func activityID(patient, startMs int64) int64 { return patient<<32 | (startMs/1000)&0xffffffff }

// splitActivityID inverts activityID.
func splitActivityID(id int64) (patient, startMs int64) { return id >> 32, (id & 0xffffffff) * 1000 }

// activityReader is the optional capability of a store to report which
// activities it holds (from the primary, where there are replicas).
type activityReader interface {
	readActivities(ctx context.Context, ids []int64, present []bool) error
}

// ReadBack reports which of the activity items the store holds.
func (w *Workload) ReadBack(ctx context.Context, ids []int64, present []bool) error {
	ar, ok := w.st.(activityReader)
	if !ok {
		return fmt.Errorf("mhealth: reading activities back: %w", errors.ErrUnsupported)
	}
	if len(ids) == 0 {
		return nil
	}
	return ar.readActivities(ctx, ids, present)
}

func (m *memoryStore) readActivities(_ context.Context, ids []int64, present []bool) error {
	for i, id := range ids {
		p, start := splitActivityID(id)
		present[i] = m.c.Has(fmt.Sprintf("act/%s/%015d", patientKey(p), start))
	}
	return nil
}

// span returns the distinct patients of ids and the range of their starts,
// for one query whose rows the caller matches against ids.
func span(ids []int64) (patients []int64, lo, hi int64) {
	seen := map[int64]bool{}
	for i, id := range ids {
		p, start := splitActivityID(id)
		if !seen[p] {
			seen[p] = true
			patients = append(patients, p)
		}
		if i == 0 || start < lo {
			lo = start
		}
		if i == 0 || start > hi {
			hi = start
		}
	}
	return patients, lo, hi
}

// rowScanner is the part of database/sql's and pgx's rows the read-back uses.
type rowScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

func matchRows(rows rowScanner, ids []int64, present []bool) error {
	found := map[int64]bool{}
	for rows.Next() {
		var p, start int64
		if err := rows.Scan(&p, &start); err != nil {
			return fmt.Errorf("read back activities: %w", err)
		}
		found[activityID(p, start)] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read back activities: %w", err)
	}
	for i, id := range ids {
		present[i] = found[id]
	}
	return nil
}

func (s *sqliteStore) readActivities(ctx context.Context, ids []int64, present []bool) error {
	patients, lo, hi := span(ids)
	q := "SELECT patient, start FROM mh_activity WHERE start BETWEEN ? AND ? AND patient IN (?"
	args := []any{lo, hi, patients[0]}
	for _, p := range patients[1:] {
		q += ",?"
		args = append(args, p)
	}
	rows, err := s.db.QueryContext(ctx, q+")", args...)
	if err != nil {
		return fmt.Errorf("read back activities: %w", err)
	}
	defer rows.Close()
	return matchRows(rows, ids, present)
}

func (s *pgStore) readActivities(ctx context.Context, ids []int64, present []bool) error {
	patients, lo, hi := span(ids)
	rows, err := s.c.Primary().Query(ctx, "SELECT patient, start FROM mh_activity WHERE start BETWEEN $1 AND $2 AND patient = ANY($3)", lo, hi, patients)
	if err != nil {
		return fmt.Errorf("read back activities: %w", err)
	}
	defer rows.Close()
	return matchRows(rows, ids, present)
}

func (s *searchStore) readActivities(ctx context.Context, ids []int64, present []bool) error {
	docs := make([]readback.Doc, len(ids))
	for i, id := range ids {
		p, start := splitActivityID(id)
		key := patientKey(p)
		docs[i] = readback.Doc{Index: s.activityIndex(key), ID: strconv.FormatInt(start, 10) + "-" + key, Routing: s.c.RoutingFor(key)}
	}
	return readback.SearchFound(ctx, s.c, docs, present)
}
