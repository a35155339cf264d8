package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// recordsFast makes records visits quick for a test.
var recordsFast = []string{"--set", "records.think_page=50ms", "--set", "records.think_form=100ms", "--set", "records.bcrypt_cost=4",
	"--set", "records.providers=500", "--set", "records.patients=400", "--set", "records.search_chars=4", "--set", "cache.search_ttl=5m"}

// checkRecordsCache checks a records run through a shared cache: no
// error, the cache safety checks done (and passed: a leak would have
// failed the run), hits on the shared fragments and search results, no
// stale read, every acknowledged write read back.
func checkRecordsCache(t *testing.T, dir, engine string) {
	t.Helper()
	r := resultstest.Read(t, dir)
	if r.Totals.Errors != 0 {
		t.Errorf("%d errors: %+v", r.Totals.Errors, r.Totals)
	}
	for _, op := range []string{"check_revoked", "check_deleted", "check_search_deleted"} {
		if r.Summary[op].Count == 0 {
			t.Errorf("no %s done", op)
		}
	}
	c, _ := r.ScenarioReport["cache"].(map[string]any)
	by, _ := c["by_operation"].(map[string]any)
	for _, op := range []string{"home", "providers_page", "search_providers"} {
		m, _ := by[op].(map[string]any)
		if hits, _ := m["hits"].(float64); hits == 0 {
			t.Errorf("%s: no hit in the shared cache (%v)", op, m)
		}
	}
	if stale, _ := c["stale_reads"].(float64); stale != 0 {
		t.Errorf("%v stale reads", stale)
	}
	if a := r.Audit; a == nil || a.Registers == nil || a.Registers.Lost != 0 || a.Registers.Acknowledged == 0 {
		t.Errorf("audit %+v", a)
	}
	var tier *results.Tier
	for i := range r.Tiers {
		if r.Tiers[i].Role == "cache" {
			tier = &r.Tiers[i]
		}
	}
	if tier == nil || tier.Engine != engine {
		t.Fatalf("run.json tiers %+v: want the %s cache tier", r.Tiers, engine)
	}
	// the cache server's own figures before and after the load
	if st := tier.Stats; st == nil || len(st.Before) == 0 || len(st.After) == 0 || len(st.Delta) == 0 {
		t.Errorf("cache server stats %+v", tier.Stats)
	}
}

// TestRecordsSharedCacheMemcached: the records site in this process with
// its cache on a real memcached server (cache.mode=shared).
func TestRecordsSharedCacheMemcached(t *testing.T) {
	needMemcached(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	upCluster(t, "memcached", "rcmc")
	dir := filepath.Join(t.TempDir(), "r")
	code, out, errs := run(t, ctx, append([]string{"run", "records", "--duration", "4s", "--users", "8", "--out", dir, "--progress", "off",
		"--cache-cluster", "rcmc", "--set", "cache.mode=shared", "--set", "records.etag=narrow"}, recordsFast...)...)
	t.Logf("exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "cache") {
		t.Errorf("the summary says nothing of the cache:\n%s", out)
	}
	checkRecordsCache(t, dir, "memcached")
}

// TestRecordsSharedCacheRedisAppTier: two app servers behind HAProxy that
// share one real Redis server as their cache (cluster up app
// --cache-cluster); the load generator counts the hits from the
// responses' X-Cache headers, and run.json has the Redis server's own
// figures (the app cluster's cache tier is the run's).
func TestRecordsSharedCacheRedisAppTier(t *testing.T) {
	needRedis(t)
	needHAProxy(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	upCluster(t, "redis", "rcredis")
	// a shared cache needs a cache cluster
	if code, _, errs := run(t, ctx, "cluster", "up", "app", "--name", "webx", "--scenario", "records", "--set", "cache.mode=shared"); code != ExitUsage || !strings.Contains(errs, "--cache-cluster") {
		t.Errorf("cache.mode=shared without a cache cluster: exit %d, %s", code, errs)
	}
	code, out, errs := run(t, ctx, "cluster", "up", "app", "--name", "webc", "--scenario", "records", "--servers", "2", "--cache-cluster", "rcredis",
		"--set", "records.bcrypt_cost=4", "--set", "cache.mode=shared", "--set", "cache.search_ttl=5m")
	if code != 0 {
		t.Fatalf("cluster up app: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { run(t, context.Background(), "cluster", "down", "webc") })
	dir := filepath.Join(t.TempDir(), "r")
	code, out, errs = run(t, ctx, append([]string{"run", "records", "--cluster", "webc", "--duration", "5s", "--users", "8", "--out", dir, "--progress", "off"}, recordsFast...)...)
	t.Logf("exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkRecordsCache(t, dir, "redis")
}
