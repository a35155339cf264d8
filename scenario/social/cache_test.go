package social

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/redis/redistest"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// cachedWorkload opens social on a fresh memory store with the
// assignments (tier: the cache tier, or nil) and loads it.
func cachedWorkload(t *testing.T, tier *scenario.Tier, assignments ...string) *Workload {
	t.Helper()
	return scenariotest.Cached[*Workload](t, &Scenario{}, tier, assignments...)
}

// step prepares the next operation of s that is op and does it.
func step(t *testing.T, s *Session, op int) {
	t.Helper()
	scenariotest.DoOp(t, s, op, operationNames[op])
}

// prepare prepares the next operation of s that is op.
func prepare(t *testing.T, s *Session, op int) {
	t.Helper()
	scenariotest.NextOp(t, s, op, operationNames[op])
}

// TestCacheProfiles: profile reads through a local cache, one session at
// a time: hits, misses, no stale read, updates dropping or changing the
// cached profile, the friend walk's reads hitting too.
func TestCacheProfiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ policy, keys string }{
		{cache.WriteInvalidate, KeysZipfian}, {cache.WriteThrough, KeysZipfian}, {cache.WriteInvalidate, KeysSocial},
	} {
		w := cachedWorkload(t, nil, "cache.mode=local", "cache.write="+tc.policy, KeyMix+"=d2", KeyKeys+"="+tc.keys, KeyUsers+"=200")
		a, b := w.NewSession(1, 1).(*Session), w.NewSession(2, 2).(*Session)
		for range 1000 {
			for _, s := range []*Session{a, b} {
				s.Next()
				if err := s.Do(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
		r := scenariotest.AsideReport(t, w)
		t.Logf("%s, %s keys: %d hits, %d misses, %d stale, %d invalidations, %d through sets", tc.policy, tc.keys, r["hits"], r["misses"], r["stale_reads"], r["invalidations"], r["through_sets"])
		if r["hits"].(int64) == 0 || r["misses"].(int64) == 0 || r["stale_reads"].(int64) != 0 || r["mode"] != "local" || r["fill_errors"].(int64) != 0 {
			t.Errorf("%s, %s keys: %v", tc.policy, tc.keys, r)
		}
		if tc.policy == cache.WriteInvalidate && r["invalidations"].(int64) == 0 || tc.policy == cache.WriteThrough && r["through_sets"].(int64) == 0 {
			t.Errorf("%s, %s keys: the updates did nothing to the cache: %v", tc.policy, tc.keys, r)
		}
		if tc.keys == KeysSocial && w.Report()["walk"] == nil {
			t.Error("no walk figures beside the cache's")
		}
	}
}

// TestCacheStaleProfile provokes the race: a read misses and reads the
// store; before it fills the cache, another session updates the user
// (store, then cache); the fill puts the old profile in the cache, and the
// writer's next read returns it, older than its own acknowledged update.
func TestCacheStaleProfile(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{cache.WriteInvalidate, cache.WriteThrough} {
		w := cachedWorkload(t, nil, "cache.mode=local", "cache.write="+policy, KeyMix+"=d2", KeyUsers+"=1")
		reader, writer := w.NewSession(1, 1).(*Session), w.NewSession(2, 2).(*Session)
		prepare(t, reader, OpRead)
		prepare(t, writer, OpUpdate)
		w.cache.AfterStoreRead = func() {
			w.cache.AfterStoreRead = nil
			if err := writer.Do(context.Background()); err != nil {
				t.Error(err)
			}
		}
		if err := reader.Do(context.Background()); err != nil {
			t.Fatal(err)
		}
		step(t, writer, OpRead)
		r := scenariotest.AsideReport(t, w)
		if r["stale_reads"].(int64) != 1 || r["hits"].(int64) != 1 || r["misses"].(int64) != 1 {
			t.Errorf("%s: %v", policy, r)
		}
	}
}

// TestCacheDelete: a deleted user leaves the cache, whatever the policy.
func TestCacheDelete(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{cache.WriteInvalidate, cache.WriteThrough} {
		w := cachedWorkload(t, nil, "cache.mode=local", "cache.write="+policy, KeyMix+"=d2", KeyUsers+"=1")
		s := w.NewSession(1, 1).(*Session)
		step(t, s, OpRead)
		if _, err := w.cache.KV.Get(context.Background(), Key(0)); err != nil {
			t.Fatalf("the read did not fill the cache: %v", err)
		}
		s.op, s.n, s.key, s.prepared = OpDelete, 0, Key(0), true
		if err := s.Do(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := w.cache.KV.Get(context.Background(), Key(0)); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%s: the deleted user is still cached: %v", policy, err)
		}
		if r := scenariotest.AsideReport(t, w); r["invalidations"].(int64) != 1 {
			t.Errorf("%s: %v", policy, r)
		}
	}
}

// TestCacheTierRefused: a tier that is no key-value cache is refused,
// naming those that are; without a cache nothing is reported.
func TestCacheTierRefused(t *testing.T) {
	t.Parallel()
	if w := cachedWorkload(t, nil, KeyUsers+"=10"); w.cache != nil || w.Report()["cache"] != nil {
		t.Error("a cache without a tier or cache.mode")
	}
	tier := openEngine(t, "memory")
	e := openEngine(t, "memory")
	_, err := (&Scenario{}).Open(context.Background(), scenario.Env{Engine: "memory", Conn: e.Conn, Settings: e.Settings,
		Tiers: map[string]scenario.Tier{scenario.RoleCache: {Engine: "memory", Conn: notCache{tier.Conn}}}})
	if !errors.Is(err, scenario.ErrEngineNotSupported) || !strings.Contains(err.Error(), "no key-value cache") {
		t.Errorf("a tier that is no key-value cache: %v", err)
	}
}

// TestCacheSharedRedis: audited sessions (inserts, updates, deletes; the
// friend walk's reads) through Redis as the cache tier: the statuses carry
// the cache's version and the audit's, and the audit finds every write.
func TestCacheSharedRedis(t *testing.T) {
	t.Parallel()
	tier := scenario.Tier{Engine: "redis", Conn: redistest.Open(t, enginetest.Settings(t, "redis", nil))}
	e := openEngine(t, "memory", KeyKeys+"="+KeysSocial, KeyUsers+"=300")
	wl, err := (&Scenario{}).Open(context.Background(), scenario.Env{Engine: "memory", Conn: e.Conn, Settings: e.Settings, Seed: 42,
		Tiers: map[string]scenario.Tier{scenario.RoleCache: tier}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wl.Close() })
	w := wl.(*Workload)
	h, _ := auditedRun(t, w)
	r := scenariotest.AsideReport(t, w)
	if r["mode"] != "shared" || r["engine"] != "redis" || r["hits"].(int64) == 0 || r["invalidations"].(int64) == 0 || r["invalidate_errors"].(int64) != 0 {
		t.Errorf("%v", r)
	}
	a, err := audit.CheckRegisters(context.Background(), h, w, audit.CheckConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Checked || a.Lost != 0 || a.Resurrected != 0 || a.Keys == 0 {
		t.Errorf("audit %+v", a)
	}
	if err := w.Check(context.Background()); err != nil {
		t.Error(err)
	}
}

// notCache is a connection without the key-value capability (the memory
// engine's, whose own connections have it).
type notCache struct{ engine.Conn }

// TestCacheDown: with cache.on_error=store (the default) profile reads
// the cache fails are answered by the store and counted as cache errors;
// with cache.on_error=fail they fail with the cache's error.
func TestCacheDown(t *testing.T) {
	t.Parallel()
	w := cachedWorkload(t, nil, "cache.mode=local", KeyMix+"=d2", KeyUsers+"=50")
	w.cache.KV = enginetest.DownKV{}
	s := w.NewSession(1, 1).(*Session)
	for range 100 {
		step(t, s, OpRead)
	}
	r := scenariotest.AsideReport(t, w)
	if r["hits"].(int64) != 0 || r["misses"].(int64) != 0 || r["cache_errors"].(int64) != 100 {
		t.Errorf("figures with the cache down: %v", r)
	}

	w = cachedWorkload(t, nil, "cache.mode=local", "cache.on_error=fail", KeyMix+"=d2", KeyUsers+"=50")
	w.cache.KV = enginetest.DownKV{}
	s = w.NewSession(1, 1).(*Session)
	prepare(t, s, OpRead)
	if err := s.Do(context.Background()); !errors.Is(err, enginetest.ErrCacheDown) {
		t.Errorf("on_error=fail: read %v, want the cache's error", err)
	}
}
