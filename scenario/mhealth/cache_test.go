package mhealth

import (
	"context"
	"errors"
	"testing"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/memory"
	"github.com/scalelab/scalelab/lru"
)

// countingStore counts the store's reads under a cachedStore.
type countingStore struct {
	store
	totalsReads int
}

func (c *countingStore) totals(ctx context.Context, patient int64) (int64, error) {
	c.totalsReads++
	return c.store.totals(ctx, patient)
}

// TestCachedStore: reads go through the cache (a second read is a hit
// that does not reach the store), a post drops the patient's totals so
// that the next read sees it, and a saved plan is stored in the cache
// with cache.write=through.
func TestCachedStore(t *testing.T) {
	ctx := context.Background()
	inner := &countingStore{store: &memoryStore{c: memory.New(memory.Faults{})}}
	stats := cache.NewStats()
	c := &cachedStore{store: inner, aside: testAside(lru.New(1<<20, engine.ErrNotFound), stats, cache.WriteThrough)}
	if err := c.createPatient(ctx, Patient{ID: 7, Goals: DefaultGoals}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if v, err := c.totals(ctx, 7); err != nil || v != 0 {
			t.Fatalf("totals %d, %v", v, err)
		}
	}
	if inner.totalsReads != 1 {
		t.Fatalf("the store was read %d times for two reads, want 1 (then a hit)", inner.totalsReads)
	}
	if err := c.postActivity(ctx, 7, Activity{Start: Epoch.UnixMilli(), End: Epoch.UnixMilli() + 3600_000, Steps: 500}); err != nil {
		t.Fatal(err)
	}
	if v, err := c.totals(ctx, 7); err != nil || v != 500 {
		t.Fatalf("after a post: totals %d, %v (a stale cached value?)", v, err)
	}
	p := Plan{Week: 0, Level: 2, Exercises: []string{"x1"}, Education: []string{"e1"}, ExerciseDone: []bool{false}, EducationDone: []bool{false}}
	if err := c.savePlan(ctx, 7, p); err != nil {
		t.Fatal(err)
	}
	if _, err := c.aside.KV.Get(ctx, cachePlanKey(7, 0)); err != nil {
		t.Fatalf("write-through did not store the plan: %v", err)
	}
	if err := c.markDone(ctx, 7, 0, 'x', 0); err != nil {
		t.Fatal(err)
	}
	got, err := c.plan(ctx, 7, 0)
	if err != nil || !got.ExerciseDone[0] {
		t.Fatalf("after a done mark: %+v, %v", got, err)
	}
	if _, err := c.plan(ctx, 7, 5); err == nil {
		t.Fatal("a missing plan read through the cache")
	} else if !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("a missing plan: %v", err)
	}
	h, m, _ := stats.Totals()
	if h != 1 || m != 4 {
		t.Fatalf("hits %d, misses %d; want 1 and 4", h, m)
	}
}

// TestCachedStoreCacheDown: a read the cache fails is answered by the
// store and counted as a cache error (cache.on_error=store), or fails
// with the cache's error (fail).
func TestCachedStoreCacheDown(t *testing.T) {
	ctx := context.Background()
	inner := &countingStore{store: &memoryStore{c: memory.New(memory.Faults{})}}
	stats := cache.NewStats()
	c := &cachedStore{store: inner, aside: testAside(enginetest.DownKV{}, stats, cache.WriteInvalidate)}
	if err := c.createPatient(ctx, Patient{ID: 7, Goals: DefaultGoals}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if v, err := c.totals(ctx, 7); err != nil || v != 0 {
			t.Fatalf("totals %d, %v", v, err)
		}
	}
	if h, m, _ := stats.Totals(); h != 0 || m != 0 || inner.totalsReads != 3 {
		t.Errorf("hits %d, misses %d, store reads %d; want 0, 0 and 3", h, m, inner.totalsReads)
	}
	if got := stats.Report(cache.Shared, "redis")["cache_errors"]; got != int64(3) {
		t.Errorf("cache errors %v, want 3", got)
	}
	c.aside.OnError = cache.OnErrorFail
	if _, err := c.totals(ctx, 7); !errors.Is(err, enginetest.ErrCacheDown) {
		t.Errorf("on_error=fail: %v, want the cache's error", err)
	}
}

// testAside is cache-aside over kv with write policy write, counting into
// stats.
func testAside(kv engine.KV, stats *cache.Stats, write string) *cache.Aside {
	a := cache.NewAside(&cache.Opened{KV: kv, Mode: cache.Local, Write: write, OnError: cache.OnErrorStore}, true)
	a.Stats = stats
	return a
}
