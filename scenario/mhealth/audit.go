package mhealth

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/memory"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/scenario"
)

// The acknowledged-write audit (docs/audit.md): activity.post logs every
// posted activity, named by its patient and start hour; plan.next logs the
// week's plan it saves, and exercise.update and education.update the done
// mark they set in it (each set once, so each is an item that must be
// there afterwards); the audit reads them all back. Achievements and
// totals are derived from the activities and checked by the sessions'
// read-your-writes checks and the totals check after the run.

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

// Plan items: a week's plan saved (planSaved), an exercise or education
// item marked done. Their ids are negative, so that they never meet an
// activity's: -1 - (patient<<20 | week<<10 | what<<8 | item).
const (
	planSaved     = 0
	exerciseDone  = 1
	educationDone = 2
)

// planItemID names a plan item as an audit item.
func planItemID(patient int64, week, what, item int) int64 {
	return -1 - (patient<<20 | int64(week&0x3ff)<<10 | int64(what&3)<<8 | int64(item&0xff))
}

// splitPlanItemID inverts planItemID.
func splitPlanItemID(id int64) (patient int64, week, what, item int) {
	v := -1 - id
	return v >> 20, int(v>>10) & 0x3ff, int(v>>8) & 3, int(v) & 0xff
}

// planReader is the optional capability of a store to read a plan for the
// audit from the primary (replicas), past injected faults (memory); other
// stores read plans for the audit as sessions do.
type planReader interface {
	readPlan(ctx context.Context, patient int64, week int) (Plan, error)
}

// ReadBack reports which of the activity and plan items the store holds.
func (w *Workload) ReadBack(ctx context.Context, ids []int64, present []bool) error {
	ar, ok := w.base.(activityReader)
	if !ok {
		return fmt.Errorf("mhealth: reading activities back: %w", errors.ErrUnsupported)
	}
	var acts, plans []int
	for i, id := range ids {
		if id < 0 {
			plans = append(plans, i)
		} else {
			acts = append(acts, i)
		}
	}
	if len(plans) == 0 {
		if len(ids) == 0 {
			return nil
		}
		return ar.readActivities(ctx, ids, present)
	}
	if len(acts) > 0 {
		sub, got := make([]int64, len(acts)), make([]bool, len(acts))
		for j, i := range acts {
			sub[j] = ids[i]
		}
		if err := ar.readActivities(ctx, sub, got); err != nil {
			return err
		}
		for j, i := range acts {
			present[i] = got[j]
		}
	}
	return w.readPlanItems(ctx, ids, plans, present)
}

// readPlanItems reads the plans of the plan items ids[i] for i in which,
// once per patient and week, and marks what each holds.
func (w *Workload) readPlanItems(ctx context.Context, ids []int64, which []int, present []bool) error {
	read := w.base.plan
	if pr, ok := w.base.(planReader); ok {
		read = pr.readPlan
	}
	type pw struct {
		patient int64
		week    int
	}
	plans := map[pw]*Plan{}
	for _, i := range which {
		patient, week, what, item := splitPlanItemID(ids[i])
		p, ok := plans[pw{patient, week}]
		if !ok {
			got, err := read(ctx, patient, week)
			switch {
			case errors.Is(err, engine.ErrNotFound):
			case err != nil:
				return fmt.Errorf("read back plan of week %d of patient %d: %w", week, patient, err)
			default:
				p = &got
			}
			plans[pw{patient, week}] = p
		}
		switch {
		case p == nil:
			present[i] = false
		case what == planSaved:
			present[i] = true
		case what == exerciseDone:
			present[i] = item < len(p.ExerciseDone) && p.ExerciseDone[item]
		default:
			present[i] = item < len(p.EducationDone) && p.EducationDone[item]
		}
	}
	return nil
}

// readPlan reads a plan past injected faults (planReader).
func (m *memoryStore) readPlan(_ context.Context, patient int64, week int) (Plan, error) {
	var p Plan
	err := m.c.Peek(planKey(patient, week), func(rec memory.Record) error {
		p = recordPlan(rec, week)
		return nil
	})
	return p, err
}

// readPlan reads a plan from the primary (planReader).
func (s *pgStore) readPlan(ctx context.Context, patient int64, week int) (Plan, error) {
	return (&pgStore{c: s.c, router: s.c.PrimaryRouter()}).plan(ctx, patient, week)
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
	docs := make([]search.DocRef, len(ids))
	for i, id := range ids {
		p, start := splitActivityID(id)
		key := patientKey(p)
		docs[i] = search.DocRef{Index: s.activityIndex(key), ID: strconv.FormatInt(start, 10) + "-" + key, Routing: s.c.RoutingFor(key)}
	}
	return s.c.Found(ctx, docs, present)
}
