package ycsb

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
)

// A cache tier in front of the store (--cache ENGINE): reads try the
// cache first; a miss reads the store and fills the cache with the record
// read (all fields). Updates and read-modify-writes write the store, then
// drop the key from the cache, so that the next read fills it again
// (cache-aside with invalidation). Inserts and scans go to the store only.
// The audit reads the store, never the cache.

var (
	_ scenario.TierUser = (*Scenario)(nil)
	_ scenario.Reporter = (*Workload)(nil)
)

// cacheCollection is the cache's collection name.
const cacheCollection = "usertable_cache"

// Tiers declares the cache tier.
func (*Scenario) Tiers() []scenario.TierSpec {
	return []scenario.TierSpec{{Role: scenario.RoleCache,
		Description: "a read-through cache: reads try it first, a miss reads the store and fills it; updates write the store and drop the key from the cache"}}
}

// cacheStats counts what the cache tier did.
type cacheStats struct {
	hits, misses, fillErrors, invalidations, invalidateErrors atomic.Int64
}

// openCache opens the cache tier's collection (emptied: a run starts with
// a cold cache) when the run has one.
func openCache(ctx context.Context, env scenario.Env, cfg *config) (engine.Collection, error) {
	t, ok := env.Tier(scenario.RoleCache)
	if !ok {
		return nil, nil
	}
	r, ok := t.Conn.(engine.Records)
	if !ok {
		return nil, fmt.Errorf("ycsb: --cache %s: %w (a cache tier needs an engine with records: %v)", t.Engine, scenario.ErrEngineNotSupported, scenario.RecordEngines())
	}
	c, err := r.Collection(ctx, engine.CollectionSpec{Name: cacheCollection, Fields: fieldNames(cfg.fields), Recreate: true})
	if err != nil {
		return nil, fmt.Errorf("ycsb: open the cache tier (%s): %w", t.Engine, err)
	}
	return c, nil
}

// cachedGet reads key through the cache into s.res.
func (s *Session) cachedGet(ctx context.Context) error {
	w := s.w
	if err := w.cache.Get(ctx, s.key, s.field, &s.res); err == nil && s.res.Len() == 1 {
		w.cacheStats.hits.Add(1)
		return nil
	} else if err != nil && !errors.Is(err, engine.ErrNotFound) {
		return fmt.Errorf("cache: %w", err)
	}
	w.cacheStats.misses.Add(1)
	s.res.Reset(s.nf)
	if err := s.st.Get(ctx, s.key, engine.AllFields, &s.res); err != nil {
		return err
	}
	vals := make([][]byte, s.nf)
	complete := true
	for f := range vals {
		v, ok := s.res.Value(0, f)
		vals[f], complete = v, complete && ok
	}
	if complete {
		err := w.cache.Insert(ctx, s.key, vals)
		if err != nil { // filled by another session meanwhile, or the cache failed
			w.cacheStats.fillErrors.Add(1)
		}
	}
	return nil
}

// invalidate drops the key just written from the cache.
func (s *Session) invalidate(ctx context.Context) {
	w := s.w
	w.cacheStats.invalidations.Add(1)
	if err := w.cache.Delete(ctx, s.key); err != nil && !errors.Is(err, engine.ErrNotFound) {
		w.cacheStats.invalidateErrors.Add(1)
	}
}

// Report gives the cache tier's figures (nothing without one).
func (w *Workload) Report() map[string]any {
	if w.cache == nil {
		return nil
	}
	st := &w.cacheStats
	hits, misses := st.hits.Load(), st.misses.Load()
	rate := 0.0
	if hits+misses > 0 {
		rate = float64(hits) / float64(hits+misses)
	}
	return map[string]any{"cache": map[string]any{
		"hits": hits, "misses": misses, "hit_rate": rate, "fill_errors": st.fillErrors.Load(),
		"invalidations": st.invalidations.Load(), "invalidate_errors": st.invalidateErrors.Load(),
	}}
}
