package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results/resultstest"
)

// TestCacheTier: --cache names a tier beside the store; run.json records
// it (engine, server, its own settings from --set cache.KEY), the scenario
// reports the cache's figures, and tiers a scenario does not use, or a
// target with a password, are usage errors before anything is created.
func TestCacheTier(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "cached")
	code, out, errs := run(t, context.Background(), "run", "ycsb", "--engine", "sqlite", "--cache", "memory",
		"--set", "cache.memory.latency=100us", "--set", "ycsb.records=500", "--set", "ycsb.workload=c",
		"--duration", "1s", "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	r := resultstest.Read(t, dir)
	if len(r.Tiers) != 1 || r.Tiers[0].Role != "cache" || r.Tiers[0].Engine != "memory" || r.Tiers[0].Server == nil ||
		r.Tiers[0].Settings["memory.latency"] != "100us" || r.Engine != "sqlite" {
		t.Fatalf("tiers %+v (store %s)", r.Tiers, r.Engine)
	}
	if r.Settings["memory.latency"] != "" {
		t.Errorf("the cache's setting leaked into the store's settings: %v", r.Settings)
	}
	cache, _ := r.ScenarioReport["cache"].(map[string]any)
	if hits, _ := cache["hits"].(float64); hits <= 0 || cache["misses"].(float64) <= 0 {
		t.Errorf("cache report %v", r.ScenarioReport)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "logs", "--cache", "memory"}, "scenario logs uses no cache tier"},
		{[]string{"run", "ycsb", "--cache", "nosuch"}, "--cache"},
		{[]string{"run", "ycsb", "--cache-target", "x"}, "needs --cache ENGINE"},
		{[]string{"run", "ycsb", "--cache", "redis", "--cache-target", "redis://u:hunter2@127.0.0.1:6379"}, "--cache-target"},
		{[]string{"run", "ycsb", "--cache", "postgres", "--cache-target", "postgres://u@127.0.0.1/db"}, "engine postgres is no key-value cache; allowed: memcached|memory|redis"},
		{[]string{"run", "ycsb", "--cache", "memory", "--set", "cache.memory.nosuch=1"}, "the cache tier"},
		{[]string{"run", "ycsb", "--cache", "memory", "--set", "cache.memory.latenci=1ms"}, `did you mean "cache.memory.latency"?`},
	} {
		out := filepath.Join(t.TempDir(), "bad")
		code, stdout, stderr := run(t, context.Background(), append(tc.args, "--out", out)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stdout+stderr, "hunter2") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: a results directory was created", tc.args)
		}
	}
}
