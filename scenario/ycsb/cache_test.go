package ycsb

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/redis/redistest"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/scenariotest"
	"github.com/scalelab/scalelab/setting"
)

// cached opens ycsb on a fresh memory store with the assignments (tier:
// the cache tier, or nil) and loads it.
func cached(t *testing.T, tier *scenario.Tier, assignments ...string) *Workload {
	t.Helper()
	return scenariotest.Cached[*Workload](t, &Scenario{}, tier, assignments...)
}

// runOps runs n operations of each session in turn, one at a time.
func runOps(t *testing.T, n int, sessions ...*Session) {
	t.Helper()
	for range n {
		for _, s := range sessions {
			if _, ok := s.Next(); !ok {
				t.Fatal("session ended")
			}
			if err := s.Do(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// next prepares the next operation of s that is op.
func next(t *testing.T, s *Session, op int) {
	t.Helper()
	scenariotest.NextOp(t, s, op, operationNames[op])
}

// TestCacheNoConcurrentWriter: with no writer running beside a read
// (sessions taking turns, each operation done before the next starts),
// no read is stale, whatever the policy, and ycsb.verify finds every
// value (versions stamped in) right; hits, misses and the policy's work
// are counted.
func TestCacheNoConcurrentWriter(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{cache.WriteInvalidate, cache.WriteThrough} {
		for _, wl := range []string{"a", "f"} {
			w := cached(t, nil, "cache.mode=local", "cache.write="+policy, "ycsb.workload="+wl, "ycsb.records=40", "ycsb.verify=true", "ycsb.session_ops=0")
			runOps(t, 1500, w.newSession(1), w.newSession(2), w.newSession(3))
			r := scenariotest.AsideReport(t, w)
			hits, misses, stale := r["hits"].(int64), r["misses"].(int64), r["stale_reads"].(int64)
			t.Logf("%s, workload %s: %d hits, %d misses, %d stale, %d invalidations, %d through sets", policy, wl, hits, misses, stale, r["invalidations"], r["through_sets"])
			if stale != 0 || hits == 0 || misses == 0 || r["mode"] != "local" || r["write_policy"] != policy || r["stale_checked"] != true {
				t.Errorf("%s, workload %s: %v", policy, wl, r)
			}
			if n := r["invalidations"].(int64) + r["through_sets"].(int64); n == 0 || r["fill_errors"].(int64) != 0 || r["through_errors"].(int64) != 0 {
				t.Errorf("%s, workload %s: the writes did nothing to the cache: %v", policy, wl, r)
			}
			if policy == cache.WriteThrough && r["invalidations"].(int64) != 0 {
				t.Errorf("through: %d invalidations", r["invalidations"])
			}
			if ent, _ := r["local_entries"].(int); ent == 0 || ent > 40 || r["local_size"] != int64(33554432) {
				t.Errorf("local usage: %v entries, size %v", r["local_entries"], r["local_size"])
			}
			op := r["by_operation"].(map[string]any)[map[string]string{"a": "update", "f": "read_modify_write"}[wl]].(map[string]any)
			if op["store_calls"].(int64) == 0 || op["cache_calls"].(int64) == 0 {
				t.Errorf("%s, workload %s: the writes' calls %v", policy, wl, op)
			}
		}
	}
}

// TestCacheThroughHitsMore: the same operations hit more often when an
// update stores the new record than when it drops the key.
func TestCacheThroughHitsMore(t *testing.T) {
	t.Parallel()
	hits := map[string]int64{}
	for _, policy := range []string{cache.WriteInvalidate, cache.WriteThrough} {
		w := cached(t, nil, "cache.mode=local", "cache.write="+policy, "ycsb.workload=a", "ycsb.records=100", "ycsb.session_ops=0")
		runOps(t, 2000, w.newSession(7))
		hits[policy] = scenariotest.AsideReport(t, w)["hits"].(int64)
	}
	if hits[cache.WriteThrough] <= hits[cache.WriteInvalidate] {
		t.Errorf("hits: %v", hits)
	}
}

// TestCacheStaleRace provokes the race of a cache in front of a store: a
// read misses and reads the store; before it fills the cache, another
// session updates the record (store, then the cache); the fill then puts
// the old record in the cache, and the writer's next read returns it,
// older than its own acknowledged write: a stale read.
func TestCacheStaleRace(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{cache.WriteInvalidate, cache.WriteThrough} {
		w := cached(t, nil, "cache.mode=local", "cache.write="+policy, "ycsb.workload=a", "ycsb.records=1", "ycsb.session_ops=0")
		reader, writer := w.newSession(1), w.newSession(2)
		next(t, reader, OpRead)
		next(t, writer, OpUpdate)
		ctx := context.Background()
		w.cache.AfterStoreRead = func() {
			w.cache.AfterStoreRead = nil
			if err := writer.Do(ctx); err != nil {
				t.Error(err)
			}
		}
		if err := reader.Do(ctx); err != nil {
			t.Fatal(err)
		}
		scenariotest.DoOp(t, writer, OpRead, operationNames[OpRead])
		r := scenariotest.AsideReport(t, w)
		read := r["by_operation"].(map[string]any)["read"].(map[string]any)
		if r["stale_reads"].(int64) != 1 || read["stale_reads"].(int64) != 1 || read["hits"].(int64) != 1 || read["misses"].(int64) != 1 {
			t.Errorf("%s: %v", policy, r)
		}
		// the stale entry stays until the next write of the key
		scenariotest.DoOp(t, writer, OpRead, operationNames[OpRead])
		if n := scenariotest.AsideReport(t, w)["stale_reads"].(int64); n != 2 {
			t.Errorf("%s: %d stale reads after reading the stale entry again", policy, n)
		}
	}
}

// TestCacheConcurrent: sessions reading and writing at once through one
// local cache: every read is a hit or a miss, values stay right
// (ycsb.verify); races may leave stale entries, which are counted.
func TestCacheConcurrent(t *testing.T) {
	t.Parallel()
	const sessions, ops = 4, 500
	w := cached(t, nil, "cache.mode=local", "ycsb.workload=a", "ycsb.records=20", "ycsb.verify=true", "ycsb.session_ops=0")
	reads := make([]int64, sessions)
	done := make(chan error, sessions)
	for i := range sessions {
		go func() {
			s := w.newSession(uint64(i))
			for range ops {
				op, _ := s.Next()
				if op == OpRead {
					reads[i]++
				}
				if err := s.Do(context.Background()); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range sessions {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	r := scenariotest.AsideReport(t, w)
	var total int64
	for _, n := range reads {
		total += n
	}
	t.Logf("%d reads: %d hits, %d misses, %d stale", total, r["hits"], r["misses"], r["stale_reads"])
	if r["hits"].(int64)+r["misses"].(int64) != total {
		t.Errorf("%d reads, report %v", total, r)
	}
}

// TestCacheTTL: an entry lives cache.ttl, then the next read misses.
func TestCacheTTL(t *testing.T) {
	t.Parallel()
	w := cached(t, nil, "cache.mode=local", "cache.ttl=50ms", "ycsb.workload=c", "ycsb.records=1")
	s := w.newSession(1)
	runOps(t, 2, s) // a miss, then a hit
	time.Sleep(100 * time.Millisecond)
	runOps(t, 1, s) // expired: a miss
	r := scenariotest.AsideReport(t, w)
	if r["hits"].(int64) != 1 || r["misses"].(int64) != 2 || r["ttl"] != "50ms" {
		t.Errorf("%v", r)
	}
}

// TestCacheModes: cache.mode off (or auto without a tier) caches nothing
// and reports nothing; shared needs a tier, and a tier that is no
// key-value cache is refused, naming those that are.
func TestCacheModes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"off", "auto"} {
		if w := cached(t, nil, "cache.mode="+mode); w.cache != nil || w.Report() != nil {
			t.Errorf("cache.mode=%s: a cache", mode)
		}
	}
	e := openEngine(t, "memory", "cache.mode=shared")
	_, err := (&Scenario{}).Open(context.Background(), scenario.Env{Engine: "memory", Conn: e.Conn, Settings: e.Settings})
	if !errors.Is(err, setting.ErrBadValue) {
		t.Errorf("shared without a tier: %v", err)
	}
	tier := openEngine(t, "memory")
	e = openEngine(t, "memory")
	_, err = (&Scenario{}).Open(context.Background(), scenario.Env{Engine: "memory", Conn: e.Conn, Settings: e.Settings,
		Tiers: map[string]scenario.Tier{scenario.RoleCache: {Engine: "memory", Conn: notCache{tier.Conn}}}})
	if !errors.Is(err, scenario.ErrEngineNotSupported) || !strings.Contains(err.Error(), "memory is no key-value cache") || !strings.Contains(err.Error(), "cache.mode=local") {
		t.Errorf("a tier that is no key-value cache: %v", err)
	}
	// the same tier is fine when the cache is local
	w := cached(t, &scenario.Tier{Engine: "memory", Conn: tier.Conn}, "cache.mode=local")
	if w.cache == nil || w.cache.Mode != cache.Local {
		t.Errorf("local with a tier: %+v", w.cache)
	}
}

// TestCacheShortFields: fields too short to carry a version are cached
// but not checked for stale reads, and the report says so.
func TestCacheShortFields(t *testing.T) {
	t.Parallel()
	w := cached(t, nil, "cache.mode=local", "ycsb.field_length=20", "ycsb.records=10", "ycsb.verify=true", "ycsb.session_ops=0")
	runOps(t, 500, w.newSession(1))
	if r := scenariotest.AsideReport(t, w); r["stale_checked"] != false || r["hits"].(int64) == 0 {
		t.Errorf("%v", r)
	}
}

// TestCacheEntryCorrupt: an entry the scenario cannot decode fails the
// read as an integrity error.
func TestCacheEntryCorrupt(t *testing.T) {
	t.Parallel()
	w := cached(t, nil, "cache.mode=local", "ycsb.workload=c", "ycsb.records=1")
	s := w.newSession(1)
	next(t, s, OpRead)
	if err := w.cache.KV.Set(context.Background(), string(appendKey(nil, 0, false)), []byte{3, 1, 'x'}, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Do(context.Background()); !errors.Is(err, engine.ErrIntegrity) {
		t.Errorf("a corrupt entry: %v", err)
	}
}

// TestSameValue: a value with the audit's version, the cache's, or both,
// is the value verify expects; any other change is not.
func TestSameValue(t *testing.T) {
	t.Parallel()
	want := appendDeterministicValue(nil, []byte("user1"), "field0", 100)
	for name, v := range map[string][]byte{"none": want, "audit": nil, "cache": nil, "both": nil} {
		v = slices.Clone(want)
		if name == "audit" || name == "both" {
			putVersion(v, 77)
		}
		if name == "cache" || name == "both" {
			putStamp(v, 99)
		}
		if !sameValue(v, want) {
			t.Errorf("%s: %q is not %q", name, v, want)
		}
		if name == "cache" || name == "both" {
			if stampOf(v) != 99 {
				t.Errorf("%s: stamp %d", name, stampOf(v))
			}
		}
		v[len(v)-1] ^= 1
		if sameValue(v, want) {
			t.Errorf("%s: a changed value passes", name)
		}
	}
	if stampOf(want) != 0 || stampOf(want[:staleLen-1]) != 0 {
		t.Error("an unstamped value has a stamp")
	}
}

// TestCacheShared runs ycsb through a real cache tier (Redis; memcached's
// runs in cli, as this test binary has no memcached provider for
// the conformance suites): reads fill the tier's "ycsb" namespace,
// updates drop keys, values stay right (ycsb.verify) and, one session at
// a time, no read is stale; a second run on the same tier starts cold (a
// fresh generation).
func TestCacheShared(t *testing.T) {
	t.Parallel()
	tier := &scenario.Tier{Engine: "redis", Conn: redistest.Open(t, enginetest.Settings(t, "redis", nil))}
	w := cached(t, tier, "ycsb.workload=b", "ycsb.records=200", "ycsb.verify=true", "ycsb.session_ops=0")
	runOps(t, 1000, w.newSession(1), w.newSession(2))
	r := scenariotest.AsideReport(t, w)
	if r["mode"] != "shared" || r["engine"] != "redis" || r["stale_reads"].(int64) != 0 || r["hits"].(int64) == 0 || r["misses"].(int64) == 0 ||
		r["invalidations"].(int64) == 0 || r["fill_errors"].(int64) != 0 || r["invalidate_errors"].(int64) != 0 {
		t.Errorf("%v", r)
	}
	if _, ok := r["local_size"]; ok {
		t.Errorf("a shared cache reports a local size: %v", r)
	}
	again := cached(t, tier, "ycsb.workload=c", "ycsb.records=200", "ycsb.session_ops=0")
	runOps(t, 1, again.newSession(1))
	if r := scenariotest.AsideReport(t, again); r["misses"].(int64) != 1 {
		t.Errorf("the second run's first read: %v", r)
	}
}

// notCache is a connection without the key-value capability (the memory
// engine's, whose own connections have it).
type notCache struct{ engine.Conn }

// TestCacheDownBypassed: with cache.on_error=store (the default) a read
// the cache fails is answered by the store and counted as a cache error,
// neither a hit nor a miss, and the store's values are right; with
// cache.on_error=fail the read fails with the cache's error.
func TestCacheDownBypassed(t *testing.T) {
	t.Parallel()
	w := cached(t, nil, "cache.mode=local", "ycsb.workload=c", "ycsb.records=40", "ycsb.verify=true", "ycsb.session_ops=0")
	w.cache.KV = enginetest.DownKV{}
	runOps(t, 200, w.newSession(1), w.newSession(2))
	r := scenariotest.AsideReport(t, w)
	if r["hits"].(int64) != 0 || r["misses"].(int64) != 0 || r["cache_errors"].(int64) != 400 || r["fill_errors"].(int64) != 0 {
		t.Errorf("figures with the cache down: %v", r)
	}
	read := r["by_operation"].(map[string]any)["read"].(map[string]any)
	if read["cache_errors"].(int64) != 400 || read["store_calls"].(int64) != 400 {
		t.Errorf("read figures with the cache down: %v", read)
	}

	w = cached(t, nil, "cache.mode=local", "cache.on_error=fail", "ycsb.workload=c", "ycsb.records=40", "ycsb.session_ops=0")
	w.cache.KV = enginetest.DownKV{}
	s := w.newSession(1)
	next(t, s, OpRead)
	if err := s.Do(context.Background()); !errors.Is(err, engine.ErrUnreachable) {
		t.Errorf("on_error=fail: read %v, want the cache's error", err)
	}
}
