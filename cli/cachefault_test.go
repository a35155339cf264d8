package cli

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/scalelab/scalelab/results/resultstest"
)

// TestCacheKilledUnderLoad: --fault acts on the cache tier's cluster when
// the store is embedded. A Redis cache killed mid-run is bypassed
// (cache.on_error=store: the reads go to SQLite and count as cache
// errors, none fails), or fails the reads (fail: errors classed
// refused); the run waits only briefly for a cache that never comes back.
func TestCacheKilledUnderLoad(t *testing.T) {
	needRedis(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	for _, onError := range []string{"store", "fail"} {
		if code, out, errs := run(t, ctx, "cluster", "up", "redis", "--name", "rk"); code != 0 {
			t.Fatalf("cluster up redis: %d %s %s", code, out, errs)
		}
		dir := filepath.Join(t.TempDir(), onError)
		code, out, errs := run(t, ctx, "run", "ycsb", "--cache-cluster", "rk", "--set", "cache.on_error="+onError, "--set", "ycsb.workload=c",
			"--set", "ycsb.records=500", "--users", "2", "--duration", "3s", "--fault", "kill:node1@1s", "--out", dir, "--progress", "off")
		run(t, context.Background(), "cluster", "down", "rk")
		if code != 0 {
			t.Fatalf("on_error=%s: exit %d\n%s\n%s", onError, code, out, errs)
		}
		r := resultstest.Read(t, dir)
		if len(r.Faults) != 1 || r.Faults[0].Outcome != "done" {
			t.Fatalf("on_error=%s: faults %+v", onError, r.Faults)
		}
		if rc := r.Recovery; rc == nil || !rc.TimedOut || rc.WaitedS > 30 {
			t.Errorf("on_error=%s: recovery %+v: want a short wait that gave up", onError, rc)
		}
		failed, _ := cacheReport(t, r)["cache_errors"].(float64)
		read := r.Summary["read"]
		switch onError {
		case "store":
			if failed == 0 || read.Errors != 0 || read.Count == 0 {
				t.Errorf("on_error=store: %v reads the cache failed, read %+v: want cache errors and no failed read", failed, read)
			}
		case "fail":
			if failed != 0 || read.Errors == 0 || read.ErrorsByClass["refused"] == 0 {
				t.Errorf("on_error=fail: %v cache errors, read %+v: want reads failed as refused", failed, read)
			}
		}
	}
}
