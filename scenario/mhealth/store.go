package mhealth

import "context"

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
