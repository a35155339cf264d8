package mhealth

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/scenario"
)

// On PostgreSQL a post is one transaction, as on SQLite: upsert the
// activity, recompute the achievements by aggregation, upsert them, add to
// the total counter. With postgres.read_from=replicas each session reads
// through its own router: from a replica, except within the read-your-
// writes window after its own write (then from the primary).

func init() { openers[postgres.Name] = openPostgres }

// pgSchema is the SQL schema with PostgreSQL's integer types.
var pgSchema = sqlSchema("BIGINT", "INT")

type pgStore struct {
	c      *postgres.Conn
	router *postgres.Router // nil for the workload-wide store
}

func openPostgres(ctx context.Context, env scenario.Env, _ *config) (store, error) {
	c, err := kit.AsConn[*postgres.Conn](env)
	if err != nil {
		return nil, err
	}
	if err := c.Claim(ctx, sqlTables...); err != nil { // before anything is written
		return nil, err
	}
	if _, err := c.Primary().Exec(ctx, pgSchema); err != nil {
		return nil, fmt.Errorf("create tables: %w", err)
	}
	if err := c.MarkTables(ctx, sqlTables...); err != nil {
		return nil, err
	}
	return &pgStore{c: c, router: c.NewRouter()}, nil
}

func (s *pgStore) forSession() store { return &pgStore{c: s.c, router: s.c.NewRouter()} }

func (s *pgStore) stores() bool { return true }

func (s *pgStore) writer() *pgxpool.Pool { return s.router.Writer() }

func (s *pgStore) reader() *pgxpool.Pool {
	p, _ := s.router.Reader()
	return p
}

// pgNotFound makes "no rows" the scenario's ErrNotFound (the engine
// classifies its other errors).
func pgNotFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.ErrNotFound
	}
	return err
}

func (s *pgStore) reset(ctx context.Context) error {
	_, err := s.writer().Exec(ctx, `TRUNCATE mh_patient, mh_activity, mh_achievements, mh_totals, mh_plan`)
	return pgNotFound(err)
}

// inTx runs fn in a transaction on the primary and marks the user's write.
func (s *pgStore) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	err := pgx.BeginFunc(ctx, s.writer(), fn)
	s.router.Wrote()
	return pgNotFound(err)
}

func (s *pgStore) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := s.writer().Exec(ctx, sql, args...)
	s.router.Wrote()
	return tag.RowsAffected(), pgNotFound(err)
}

func (s *pgStore) createPatient(ctx context.Context, p Patient) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO mh_patient VALUES ($1, $2, $3, $4, $5)`, p.ID, p.Created, p.Goals.Daily, p.Goals.Weekly, p.Goals.Monthly); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO mh_totals VALUES ($1, 0)`, p.ID)
		return err
	})
}

func (s *pgStore) postActivity(ctx context.Context, patient int64, a Activity) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO mh_activity VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (patient, start) DO UPDATE SET "end" = excluded."end", type = excluded.type, steps = excluded.steps`,
			patient, a.Start, a.End, a.Type, a.Steps); err != nil {
			return err
		}
		d, w, m := dayStart(a.Start), weekStart(a.Start), monthStart(a.Start)
		var daily, weekly, monthly int64
		if err := tx.QueryRow(ctx, `SELECT
			  COALESCE(SUM(steps) FILTER (WHERE start >= $1), 0),
			  COALESCE(SUM(steps) FILTER (WHERE start >= $2), 0),
			  COALESCE(SUM(steps) FILTER (WHERE start >= $3), 0)
			FROM mh_activity WHERE patient = $4 AND start >= $5 AND start <= $6`,
			d, w, m, patient, min(w, m), a.Start).Scan(&daily, &weekly, &monthly); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO mh_achievements VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (patient) DO UPDATE SET day_start = excluded.day_start, daily = excluded.daily, weekly = excluded.weekly,
			  monthly = excluded.monthly, updated_for = excluded.updated_for`, patient, d, daily, weekly, monthly, a.Start); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE mh_totals SET steps = steps + $1 WHERE patient = $2`, a.Steps, patient)
		if err == nil && tag.RowsAffected() != 1 {
			err = fmt.Errorf("%w: no totals row for patient %d", engine.ErrNotFound, patient)
		}
		return err
	})
}

func (s *pgStore) achievements(ctx context.Context, patient int64) (Achievements, error) {
	var a Achievements
	err := s.reader().QueryRow(ctx, `SELECT COALESCE(a.day_start, 0), COALESCE(a.daily, 0), COALESCE(a.weekly, 0), COALESCE(a.monthly, 0),
		COALESCE(a.updated_for, 0), p.goal_daily, p.goal_weekly, p.goal_monthly
		FROM mh_patient p LEFT JOIN mh_achievements a ON a.patient = p.id WHERE p.id = $1`, patient).
		Scan(&a.DayStart, &a.Daily, &a.Weekly, &a.Monthly, &a.UpdatedFor, &a.Goals.Daily, &a.Goals.Weekly, &a.Goals.Monthly)
	return a, pgNotFound(err)
}

func (s *pgStore) totals(ctx context.Context, patient int64) (int64, error) {
	var steps int64
	err := s.reader().QueryRow(ctx, `SELECT steps FROM mh_totals WHERE patient = $1`, patient).Scan(&steps)
	return steps, pgNotFound(err)
}

func (s *pgStore) savePlan(ctx context.Context, patient int64, p Plan) error {
	_, err := s.exec(ctx, `INSERT INTO mh_plan VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (patient, week) DO UPDATE SET level = excluded.level, exercises = excluded.exercises, education = excluded.education,
		  xdone = excluded.xdone, edone = excluded.edone, answers = excluded.answers`,
		planArgs(patient, p)...)
	return err
}

func (s *pgStore) plan(ctx context.Context, patient int64, week int) (Plan, error) {
	p, err := scanPlan(s.reader().QueryRow(ctx, `SELECT level, exercises, education, xdone, edone, answers FROM mh_plan WHERE patient = $1 AND week = $2`, patient, week), week)
	return p, pgNotFound(err)
}

func (s *pgStore) markDone(ctx context.Context, patient int64, week int, kind byte, item int) error {
	col := "xdone"
	if kind == 'e' {
		col = "edone"
	}
	n, err := s.exec(ctx, `UPDATE mh_plan SET `+col+` = overlay(`+col+` placing '1' from $1::int + 1 for 1)
		WHERE patient = $2 AND week = $3 AND length(`+col+`) > $1::int`, item, patient, week)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%w: plan item %d of week %d of patient %d", engine.ErrNotFound, item, week, patient)
	}
	return nil
}

// settle waits until the replicas have replayed everything the primary
// wrote, so the check reads what was acknowledged.
func (s *pgStore) settle(ctx context.Context) error { return s.c.WaitReplicas(ctx) }

func (s *pgStore) close() error { return nil }
