package mhealth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
)

// A cache in front of the store (cache.mode local or shared): a patient's
// totals, achievements and weekly plans are read through it (a miss reads
// the store and fills the cache for cache.ttl). Writes go to the store
// first; then an activity post drops the patient's totals and
// achievements (their new values are computed by the store), a done mark
// drops the week's plan, and a saved plan is dropped (cache.write=
// invalidate) or stored (through). The freshness checks count a read
// older than the patient's own acknowledged writes as a stale read, so a
// cache that keeps old values shows as stale reads beside its hit rate.

var _ scenario.TierUser = (*Scenario)(nil)

// Tiers declares the cache tier.
func (*Scenario) Tiers() []scenario.TierSpec {
	return []scenario.TierSpec{{Role: scenario.RoleCache,
		Description: "a read-through cache of totals, achievements and plans (cache.mode=shared)"}}
}

// cachedStore reads through a cache in front of a store (cache.Aside;
// its Stats are the workload's).
type cachedStore struct {
	store
	aside *cache.Aside
}

// openCache wraps st in the cache of cache.mode (st itself when off).
func openCache(ctx context.Context, env scenario.Env, st store, stats *cache.Stats) (store, cache.Mode, string, error) {
	o, err := kit.OpenCache(ctx, env, Name, Name)
	if err != nil || o == nil {
		return st, cache.Off, "", err
	}
	a := cache.NewAside(o, true)
	a.Stats = stats
	return &cachedStore{store: st, aside: a}, o.Mode, o.Engine, nil
}

// forSession keeps the store's per-session view (a read-your-writes
// window) behind the same cache.
func (c *cachedStore) forSession() store {
	if ss, ok := c.store.(sessionStore); ok {
		cp := *c
		cp.store = ss.forSession()
		return &cp
	}
	return c
}

func cacheTotalsKey(p int64) string { return "totals:" + strconv.FormatInt(p, 10) }
func cacheAchKey(p int64) string    { return "ach:" + strconv.FormatInt(p, 10) }
func cachePlanKey(p int64, week int) string {
	return "plan:" + strconv.FormatInt(p, 10) + ":" + strconv.Itoa(week)
}

// readThrough fills out from the cache under key (an entry that does not
// decode is a miss), or from read (the store) and then the cache; op
// names the figures.
func readThrough[T any](ctx context.Context, c *cachedStore, op, key string, out *T, read func() (T, error)) error {
	var e cache.Event
	_, err := c.aside.Read(ctx, key, &e, func(b []byte) error {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%w: %v", engine.ErrNotFound, err)
		}
		return nil
	}, func() ([]byte, bool, error) {
		var v T
		err := e.TimeStore(func() (err error) { v, err = read(); return err })
		if err != nil {
			return nil, false, err
		}
		*out = v
		b, err := json.Marshal(v)
		return b, err == nil, nil
	})
	c.aside.Stats.Record(op, e)
	return err
}
func (c *cachedStore) totals(ctx context.Context, patient int64) (int64, error) {
	var v int64
	err := readThrough(ctx, c, operationNames[OpTotalsGet], cacheTotalsKey(patient), &v, func() (int64, error) { return c.store.totals(ctx, patient) })
	return v, err
}

func (c *cachedStore) achievements(ctx context.Context, patient int64) (Achievements, error) {
	var v Achievements
	err := readThrough(ctx, c, operationNames[OpAchievementsGet], cacheAchKey(patient), &v, func() (Achievements, error) {
		return c.store.achievements(ctx, patient)
	})
	return v, err
}

func (c *cachedStore) plan(ctx context.Context, patient int64, week int) (Plan, error) {
	var v Plan
	err := readThrough(ctx, c, "plan.read", cachePlanKey(patient, week), &v, func() (Plan, error) { return c.store.plan(ctx, patient, week) })
	return v, err
}

// drop invalidates keys after a write; a failed delete is counted, and
// the stale reads it may cause are caught by the freshness checks.
func (c *cachedStore) drop(ctx context.Context, op string, keys ...string) {
	var e cache.Event
	for _, k := range keys {
		if err := c.aside.Invalidate(ctx, k, &e); err != nil && !errors.Is(err, engine.ErrNotFound) {
			break
		}
	}
	c.aside.Stats.Record(op, e)
}

func (c *cachedStore) postActivity(ctx context.Context, patient int64, a Activity) error {
	if err := c.store.postActivity(ctx, patient, a); err != nil {
		return err
	}
	c.drop(ctx, operationNames[OpActivityPost], cacheTotalsKey(patient), cacheAchKey(patient))
	return nil
}

func (c *cachedStore) savePlan(ctx context.Context, patient int64, p Plan) error {
	if err := c.store.savePlan(ctx, patient, p); err != nil {
		return err
	}
	if c.aside.Through() {
		if b, err := json.Marshal(p); err == nil {
			var e cache.Event
			err := c.aside.Store(ctx, cachePlanKey(patient, p.Week), b, &e)
			c.aside.Stats.Record(operationNames[OpPlanNext], e)
			if err == nil {
				return nil
			}
		}
	}
	c.drop(ctx, operationNames[OpPlanNext], cachePlanKey(patient, p.Week))
	return nil
}

func (c *cachedStore) markDone(ctx context.Context, patient int64, week int, kind byte, item int) error {
	if err := c.store.markDone(ctx, patient, week, kind, item); err != nil {
		return err
	}
	op := operationNames[OpExerciseUpdate]
	if kind == 'e' {
		op = operationNames[OpEducationUpdate]
	}
	c.drop(ctx, op, cachePlanKey(patient, week))
	return nil
}
