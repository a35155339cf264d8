package mhealth

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/scenario"
)

// On SQLite a post is one transaction, as the study's backend did it in
// code: insert the activity (an upsert: the id is the start time), then
// recompute the achievements by aggregation over the patient's activity
// since the start of the week or month, store them, and add the steps to
// the patient's total (a counter).

func init() { openers[sqlite.Name] = openSQLite }

// sqliteSchema is the SQL schema with SQLite's one integer type (an
// INTEGER PRIMARY KEY is the row id).
var sqliteSchema = sqlSchema("INTEGER", "INTEGER")

type sqliteStore struct {
	db *sql.DB
}

func openSQLite(ctx context.Context, env scenario.Env, _ *config) (store, error) {
	c, err := kit.AsConn[*sqlite.Conn](env)
	if err != nil {
		return nil, err
	}
	if err := c.Claim(ctx, sqlTables...); err != nil { // before anything is written
		return nil, err
	}
	s := &sqliteStore{db: c.DB()}
	if _, err := s.db.ExecContext(ctx, sqliteSchema); err != nil {
		return nil, fmt.Errorf("create tables: %w", err)
	}
	if err := c.MarkTables(ctx, sqlTables...); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *sqliteStore) stores() bool { return true }

func (s *sqliteStore) reset(ctx context.Context) error {
	for _, t := range sqlTables {
		if _, err := s.db.ExecContext(ctx, "DELETE FROM "+t); err != nil {
			return fmt.Errorf("empty %s: %w", t, err)
		}
	}
	return nil
}

// sqlNotFound makes "no rows" the scenario's ErrNotFound (the engine
// classifies its other errors).
func sqlNotFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return engine.ErrNotFound
	}
	return err
}

func (s *sqliteStore) createPatient(ctx context.Context, p Patient) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return sqlNotFound(err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.ExecContext(ctx, `INSERT INTO mh_patient VALUES (?, ?, ?, ?, ?)`, p.ID, p.Created, p.Goals.Daily, p.Goals.Weekly, p.Goals.Monthly); err != nil {
		return sqlNotFound(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO mh_totals VALUES (?, 0)`, p.ID); err != nil {
		return sqlNotFound(err)
	}
	return sqlNotFound(tx.Commit())
}

func (s *sqliteStore) postActivity(ctx context.Context, patient int64, a Activity) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return sqlNotFound(err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	// The write comes first so the transaction takes the write lock at once
	// (SQLite then waits in its busy handler instead of failing to upgrade).
	if _, err := tx.ExecContext(ctx, `INSERT INTO mh_activity VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (patient, start) DO UPDATE SET "end" = excluded."end", type = excluded.type, steps = excluded.steps`,
		patient, a.Start, a.End, a.Type, a.Steps); err != nil {
		return sqlNotFound(err)
	}
	d, w, m := dayStart(a.Start), weekStart(a.Start), monthStart(a.Start)
	var daily, weekly, monthly int64
	if err := tx.QueryRowContext(ctx, `SELECT
		  COALESCE(SUM(CASE WHEN start >= ? THEN steps END), 0),
		  COALESCE(SUM(CASE WHEN start >= ? THEN steps END), 0),
		  COALESCE(SUM(CASE WHEN start >= ? THEN steps END), 0)
		FROM mh_activity WHERE patient = ? AND start >= ? AND start <= ?`,
		d, w, m, patient, min(w, m), a.Start).Scan(&daily, &weekly, &monthly); err != nil {
		return sqlNotFound(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO mh_achievements VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (patient) DO UPDATE SET day_start = excluded.day_start, daily = excluded.daily, weekly = excluded.weekly,
		  monthly = excluded.monthly, updated_for = excluded.updated_for`, patient, d, daily, weekly, monthly, a.Start); err != nil {
		return sqlNotFound(err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE mh_totals SET steps = steps + ? WHERE patient = ?`, a.Steps, patient)
	if err != nil {
		return sqlNotFound(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: no totals row for patient %d", engine.ErrNotFound, patient)
	}
	return sqlNotFound(tx.Commit())
}

func (s *sqliteStore) achievements(ctx context.Context, patient int64) (Achievements, error) {
	var a Achievements
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(a.day_start, 0), COALESCE(a.daily, 0), COALESCE(a.weekly, 0), COALESCE(a.monthly, 0),
		COALESCE(a.updated_for, 0), p.goal_daily, p.goal_weekly, p.goal_monthly
		FROM mh_patient p LEFT JOIN mh_achievements a ON a.patient = p.id WHERE p.id = ?`, patient).
		Scan(&a.DayStart, &a.Daily, &a.Weekly, &a.Monthly, &a.UpdatedFor, &a.Goals.Daily, &a.Goals.Weekly, &a.Goals.Monthly)
	return a, sqlNotFound(err)
}

func (s *sqliteStore) totals(ctx context.Context, patient int64) (int64, error) {
	var steps int64
	err := s.db.QueryRowContext(ctx, `SELECT steps FROM mh_totals WHERE patient = ?`, patient).Scan(&steps)
	return steps, sqlNotFound(err)
}

func (s *sqliteStore) savePlan(ctx context.Context, patient int64, p Plan) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO mh_plan VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (patient, week) DO UPDATE SET level = excluded.level, exercises = excluded.exercises, education = excluded.education,
		  xdone = excluded.xdone, edone = excluded.edone, answers = excluded.answers`,
		planArgs(patient, p)...)
	return sqlNotFound(err)
}

func (s *sqliteStore) plan(ctx context.Context, patient int64, week int) (Plan, error) {
	p, err := scanPlan(s.db.QueryRowContext(ctx, `SELECT level, exercises, education, xdone, edone, answers FROM mh_plan WHERE patient = ? AND week = ?`, patient, week), week)
	return p, sqlNotFound(err)
}

// markDone sets one character of the done marks in a single statement.
func (s *sqliteStore) markDone(ctx context.Context, patient int64, week int, kind byte, item int) error {
	col := "xdone"
	if kind == 'e' {
		col = "edone"
	}
	res, err := s.db.ExecContext(ctx, `UPDATE mh_plan SET `+col+` = substr(`+col+`, 1, ?) || '1' || substr(`+col+`, ? + 2)
		WHERE patient = ? AND week = ? AND length(`+col+`) > ?`, item, item, patient, week, item)
	if err != nil {
		return sqlNotFound(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: plan item %d of week %d of patient %d", engine.ErrNotFound, item, week, patient)
	}
	return nil
}

func (s *sqliteStore) settle(context.Context) error { return nil }
func (s *sqliteStore) close() error                 { return nil }
