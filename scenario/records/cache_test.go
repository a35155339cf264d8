package records_test

import (
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario/records"
)

// cacheReport returns run.json's scenario_report.cache.
func cacheReport(t *testing.T, r *results.Run) map[string]any {
	t.Helper()
	c, ok := r.ScenarioReport["cache"].(map[string]any)
	if !ok {
		t.Fatalf("no cache in the scenario report: %v", r.ScenarioReport)
	}
	return c
}

// TestRecordsLocalCacheAndETags: the in-process site with a local cache,
// provider search results cached, and ETags: fragments hit, the browsers
// get 304s, no error, no stale read, the access checks and the audit
// hold. A global ETag changes with any write anywhere, so under several
// users' writes it rarely matches (what it is measured for); its 304s
// are checked with one user, whose reloads follow their page with no
// write in between.
func TestRecordsLocalCacheAndETags(t *testing.T) {
	for _, tc := range []struct{ etag, users string }{{"narrow", "8"}, {"global", "1"}} {
		etag := tc.etag
		t.Run(etag, func(t *testing.T) {
			t.Setenv("SCALELAB_HOME", t.TempDir())
			r := runRecords(t, 0, "--duration", "4s", "--users", tc.users,
				"--set", "cache.mode=local", "--set", "cache.search_ttl=5m", "--set", "records.etag="+etag, "--set", "records.search_chars=4",
				"--set", "records.revisit=0.5")
			if r.Totals.Errors != 0 {
				t.Errorf("%d errors: %+v", r.Totals.Errors, r.Totals)
			}
			c := cacheReport(t, r)
			by, _ := c["by_operation"].(map[string]any)
			shared := []string{"home", "providers_page"}
			if tc.users != "1" { // one user's few searches may never repeat a prefix
				shared = append(shared, "search_providers")
			}
			for _, op := range shared {
				m, _ := by[op].(map[string]any)
				if hits, _ := m["hits"].(float64); hits == 0 {
					t.Errorf("%s: no cache hit (%v)", op, m)
				}
			}
			if c["mode"] != "local" || c["stale_reads"].(float64) != 0 {
				t.Errorf("cache report %v", c)
			}
			http, _ := r.ScenarioReport["http"].(map[string]any)
			by304 := http["by_operation"].(map[string]any)
			var n304 float64
			for _, m := range by304 {
				n, _ := m.(map[string]any)["304"].(float64)
				n304 += n
			}
			if n304 == 0 {
				t.Errorf("no 304 with records.etag=%s: %v", etag, by304)
			}
			if a := r.Audit; a == nil || a.Registers == nil || a.Registers.Lost != 0 || a.Registers.Acknowledged == 0 {
				t.Errorf("audit %+v", a)
			}
		})
	}
}

// TestRecordsUnsafeCacheFailsRun: a site whose cache keeps record pages by
// patient alone and search results past deletions (reachable from tests
// only) is caught by the sessions' safety checks, and the run fails.
func TestRecordsUnsafeCacheFailsRun(t *testing.T) {
	undo := records.SetUnsafeCacheForTests()
	defer undo()
	t.Setenv("SCALELAB_HOME", t.TempDir())
	r := runRecords(t, 1, "--duration", "3s", "--users", "6", "--set", "records.mix=signup:1", "--set", "cache.mode=local")
	leaks := integrityErrors(r, "check_revoked", "check_deleted", "check_search_deleted")
	if leaks == 0 || !strings.Contains(strings.Join(r.Failures, "\n"), "integrity") {
		t.Errorf("integrity errors %d, failures %v", leaks, r.Failures)
	}
}
