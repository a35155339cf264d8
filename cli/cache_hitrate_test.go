package cli

import (
	"context"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/scalelab/scalelab/results/resultstest"
	"github.com/scalelab/scalelab/scenario/ycsb"
)

// The hit rate of a cache tier against its theoretical value: ycsb
// workload c (reads only), YCSB's zipfian keys (theta 0.99) over
// hitRateRecords records, one user (so that two reads of a key never miss
// together: every miss is the first read of its key), a fixed number of
// reads, a tier with room for every record and no ttl. Then the misses
// are the distinct keys read, and the expected hit rate follows from the
// key chooser's exact probabilities (ycsb.KeyProbabilities,
// ycsb.ExpectedHitRate). As many reads as records: the hit rate then
// depends on the distribution most (uniform keys would give 0.368, the
// scrambled zipfian 0.474).
const (
	hitRateRecords = 10000
	hitRateReads   = 10000
)

// checkHitRate runs that through `scalelab run` with the cache tier of
// cluster clusterName and compares the hit rate run.json reports with
// the expected one. The tolerance is five standard deviations of one
// run's hit rate (bounded by ycsb.ExpectedHitRate: the misses are a sum
// of thousands of negatively associated indicators, close to normal, so
// a correct cache is outside it for fewer than one seed in a million)
// plus 10^-4 for the expectation's own approximation. The seed is fixed
// (--seed 1), so the run reads the same keys every time: the test is
// not flaky, it checks the cache and the counting against the theory;
// uniform keys, or a cache that missed one read in ten more, would be
// far outside (the tolerance is about 0.025, uniform is 0.106 away).
func checkHitRate(t *testing.T, ctx context.Context, engineName, clusterName string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hitrate-"+engineName)
	code, out, errs := run(t, ctx, "run", "ycsb", "--engine", "sqlite", "--cache-cluster", clusterName,
		"--set", "ycsb.workload=c", "--set", "ycsb.records="+strconv.Itoa(hitRateRecords),
		"--users", "1", "--ops", strconv.Itoa(hitRateReads), "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("hit rate run: %d %s %s", code, out, errs)
	}
	r := resultstest.Read(t, dir)
	cache := cacheReport(t, r)
	hits, misses := cache["hits"].(float64), cache["misses"].(float64)
	if int(hits+misses) != hitRateReads || cache["mode"] != "shared" || cache["engine"] != engineName || cache["ttl"] != "0s" ||
		cache["fill_errors"].(float64) != 0 || cache["stale_reads"].(float64) != 0 {
		t.Fatalf("cache report %v: want %d reads through the %s tier, no ttl, no fill error", cache, hitRateReads, engineName)
	}
	p, err := ycsb.KeyProbabilities(hitRateRecords, "zipfian", 0.99)
	if err != nil {
		t.Fatal(err)
	}
	want, sd := ycsb.ExpectedHitRate(p, hitRateReads)
	got := cache["hit_rate"].(float64)
	tol := 5*sd + 1e-4
	t.Logf("%s: %d records, %d reads, zipfian 0.99: hit rate %.5f measured, %.5f expected (sd %.5f, tolerance %.5f); %d misses, %.1f distinct keys expected",
		engineName, hitRateRecords, hitRateReads, got, want, sd, tol, int(misses), (1-want)*hitRateReads)
	if math.Abs(got-want) > tol {
		t.Errorf("%s: hit rate %.5f, expected %.5f +- %.5f", engineName, got, want, tol)
	}
}
