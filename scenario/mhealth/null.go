package mhealth

import (
	"context"

	"github.com/scalelab/scalelab/engine/null"
	"github.com/scalelab/scalelab/scenario"
)

// The null engine stores nothing: every request returns at once, reads
// return empty values, and the scenario's checks are off. It measures the
// scenario's own cost.

func init() { openers[null.Name] = openNull }

type nullStore struct{}

func openNull(context.Context, scenario.Env, *config) (store, error) { return nullStore{}, nil }

func (nullStore) stores() bool                                        { return false }
func (nullStore) reset(context.Context) error                         { return nil }
func (nullStore) createPatient(context.Context, Patient) error        { return nil }
func (nullStore) postActivity(context.Context, int64, Activity) error { return nil }
func (nullStore) achievements(context.Context, int64) (Achievements, error) {
	return Achievements{}, nil
}
func (nullStore) totals(context.Context, int64) (int64, error)          { return 0, nil }
func (nullStore) savePlan(context.Context, int64, Plan) error           { return nil }
func (nullStore) plan(context.Context, int64, int) (Plan, error)        { return Plan{}, nil }
func (nullStore) markDone(context.Context, int64, int, byte, int) error { return nil }
func (nullStore) settle(context.Context) error                          { return nil }
func (nullStore) close() error                                          { return nil }
