package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/experiment"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestExperimentStartsCacheClusters: an experiment whose `cache` factor
// names Redis and memcached, with a `clusters:` entry for each, starts a
// real server for the combinations that use it, runs them through it as
// the cache tier (hits counted, the server's stats recorded), and stops it
// afterwards; no cluster is left behind.
func TestExperimentStartsCacheClusters(t *testing.T) {
	needRedis(t)
	needMemcached(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "xp.yaml")
	src := `# does a cache help read-mostly ycsb on SQLite?
scenario: ycsb
engine: sqlite
settings: {ycsb.records: 500, ycsb.workload: c}
load: {users: 2, duration: 2s}
clusters:
  redis: {}
  memcached: {}
factors:
  cache: [none, redis, memcached]
repeats: 1
order: grouped
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, ctx, "experiment", "validate", file)
	if code != 0 || !strings.Contains(out, "redis cache") || !strings.Contains(out, "--cache redis --cache-cluster CACHE") {
		t.Fatalf("validate: %d %s %s", code, out, errs)
	}
	xp := filepath.Join(dir, "out")
	code, out, errs = run(t, ctx, "experiment", "run", file, "--out", xp)
	if code != 0 {
		t.Fatalf("experiment run: %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "starting a local redis cluster (1 node, the cache tier) for c02") {
		t.Errorf("progress does not say the cache cluster starts:\n%s", errs)
	}
	r, err := experiment.ReadResult(xp)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Clusters) != 2 || r.Clusters[0].Engine != "redis" || r.Clusters[1].Engine != "memcached" {
		t.Fatalf("clusters %+v", r.Clusters)
	}
	for _, c := range r.Clusters {
		if !c.Stopped || c.Error != "" {
			t.Errorf("cluster %+v", c)
		}
	}
	if names, _ := cluster.List(); len(names) != 0 {
		t.Errorf("clusters left behind: %v", names)
	}
	for i, eng := range []string{"", "redis", "memcached"} {
		run := resultstest.Read(t, filepath.Join(xp, "runs", r.Combinations[i].ID+"-r01"))
		var engines []string
		for _, tier := range run.Tiers {
			if tier.Role == "cache" {
				engines = append(engines, tier.Engine)
				if tier.Stats == nil || len(tier.Stats.After) == 0 {
					t.Errorf("%s: no stats of the cache server", r.Combinations[i].ID)
				}
			}
		}
		if eng == "" {
			if len(engines) != 0 {
				t.Errorf("c01 ran with a cache: %v", engines)
			}
			continue
		}
		if len(engines) != 1 || engines[0] != eng {
			t.Errorf("%s: cache tiers %v, want %s", r.Combinations[i].ID, engines, eng)
		}
		cacheReport(t, run) // hits, misses and a hit rate
	}
}
