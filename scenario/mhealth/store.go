package mhealth

import (
	"context"
	"strings"
)

// store is what each engine's storage file implements.
type store interface {
	// stores reports whether data written can be read back (false for
	// the null engine: checks are then off).
	stores() bool
	// reset drops and recreates the scenario's data.
	reset(ctx context.Context) error
	// createPatient registers a patient with zero totals.
	createPatient(ctx context.Context, p Patient) error
	// postActivity stores one activity, then recomputes the patient's
	// achievements for the activity's day, week and month and adds its
	// steps to the patient's total.
	postActivity(ctx context.Context, patient int64, a Activity) error
	// achievements returns the patient's stored achievements.
	achievements(ctx context.Context, patient int64) (Achievements, error)
	// totals returns the patient's total steps.
	totals(ctx context.Context, patient int64) (int64, error)
	// savePlan stores the patient's plan for p.Week.
	savePlan(ctx context.Context, patient int64, p Plan) error
	// plan returns the patient's plan for a week, or engine.ErrNotFound.
	plan(ctx context.Context, patient int64, week int) (Plan, error)
	// markDone marks exercise (kind 'x') or education item (kind 'e')
	// number item of the week's plan as done.
	markDone(ctx context.Context, patient int64, week int, kind byte, item int) error
	// settle makes every acknowledged write visible to reads (a refresh
	// on near-real-time stores; nothing elsewhere).
	settle(ctx context.Context) error
	close() error
}

// sessionStore is an optional capability of a store: a view for one
// session, for engines that route a user's reads (read replicas with a
// read-your-writes window).
type sessionStore interface {
	forSession() store
}

// refresher is a store whose writes become visible to searches only after
// a refresh: refreshAll refreshes every index of the store
// (mhealth.refresh_after_write=all).
type refresher interface {
	refreshAll(ctx context.Context) error
}

// sqlTables are the SQL stores' tables: the store claims them (the
// engine's Claim) before it writes anything and marks them once created.
var sqlTables = []string{"mh_patient", "mh_activity", "mh_achievements", "mh_totals", "mh_plan"}

// sqlSchemaTemplate is the tables of the SQL stores (PostgreSQL, SQLite),
// with {big} and {int} for the engine's 64- and 32-bit integer types.
const sqlSchemaTemplate = `
CREATE TABLE IF NOT EXISTS mh_patient (id {big} PRIMARY KEY, created {big} NOT NULL,
  goal_daily {big} NOT NULL, goal_weekly {big} NOT NULL, goal_monthly {big} NOT NULL);
CREATE TABLE IF NOT EXISTS mh_activity (patient {big} NOT NULL, start {big} NOT NULL, "end" {big} NOT NULL,
  type TEXT NOT NULL, steps {big} NOT NULL, PRIMARY KEY (patient, start));
CREATE TABLE IF NOT EXISTS mh_achievements (patient {big} PRIMARY KEY, day_start {big} NOT NULL, daily {big} NOT NULL,
  weekly {big} NOT NULL, monthly {big} NOT NULL, updated_for {big} NOT NULL);
CREATE TABLE IF NOT EXISTS mh_totals (patient {big} PRIMARY KEY, steps {big} NOT NULL);
CREATE TABLE IF NOT EXISTS mh_plan (patient {big} NOT NULL, week {int} NOT NULL, level {int} NOT NULL,
  exercises TEXT NOT NULL, education TEXT NOT NULL, xdone TEXT NOT NULL, edone TEXT NOT NULL, answers TEXT NOT NULL,
  PRIMARY KEY (patient, week));`

// sqlSchema is the SQL stores' schema with big as the 64-bit and small as
// the 32-bit integer type.
func sqlSchema(big, small string) string {
	return strings.NewReplacer("{big}", big, "{int}", small).Replace(sqlSchemaTemplate)
}

// planArgs returns the values of patient's row of mh_plan holding p, in
// the table's column order.
func planArgs(patient int64, p Plan) []any {
	return []any{patient, p.Week, p.Level, encodeList(p.Exercises), encodeList(p.Education), encodeBools(p.ExerciseDone), encodeBools(p.EducationDone), encodeAnswers(p.Answers)}
}

// singleRow is the one row of a query: a pgx.Row or an *sql.Row.
type singleRow interface{ Scan(dest ...any) error }

// scanPlan reads the plan of week from row, the columns level, exercises,
// education, xdone, edone and answers of mh_plan; on an error it returns
// that error as the query gave it.
func scanPlan(row singleRow, week int) (Plan, error) {
	p := Plan{Week: week}
	var ex, ed, xd, edn, ans string
	if err := row.Scan(&p.Level, &ex, &ed, &xd, &edn, &ans); err != nil {
		return Plan{}, err
	}
	p.Exercises, p.Education, p.ExerciseDone, p.EducationDone, p.Answers = decodeList(ex), decodeList(ed), decodeBools(xd), decodeBools(edn), decodeAnswers(ans)
	return p, nil
}
