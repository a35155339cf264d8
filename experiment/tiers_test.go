package experiment

import (
	"strings"
	"testing"

	_ "github.com/scalelab/scalelab/engine/memcached" // cache engines with local clusters
	_ "github.com/scalelab/scalelab/engine/redis"
	_ "github.com/scalelab/scalelab/scenario/records" // the app tier's scenario
)

// TestCacheFactor: a factor may vary the cache tier (none or an engine);
// each combination's runs get it as --cache.
func TestCacheFactor(t *testing.T) {
	s, combos := matrixOf(t, "cache.yaml", `
name: cache
scenario: ycsb
engine: sqlite
factors:
  cache: [none, memory]
`, 2)
	none, mem := s.RunOptions(combos[0], 1, "out", ClusterNames{}), s.RunOptions(combos[1], 1, "out", ClusterNames{})
	if len(none.Tiers) != 0 || len(mem.Tiers) != 1 || mem.Tiers[0].Role != "cache" || mem.Tiers[0].Engine != "memory" {
		t.Fatalf("tiers: none %+v, memory %+v", none.Tiers, mem.Tiers)
	}
	if _, err := Parse("bad.yaml", []byte("name: x\nscenario: ycsb\nfactors:\n  cache: [nosuch]\n"), ""); err == nil {
		t.Error("an unknown cache engine was accepted")
	}
}

// TestCacheClusterFactor: cache_cluster names the cache tier's cluster
// (the run gets --cache-cluster, the engine comes from the cluster), and
// an app tier's servers get it with the scenario's cache settings.
func TestCacheClusterFactor(t *testing.T) {
	s, combos := matrixOf(t, "cache.yaml", `
name: cache
scenario: records
app: {servers: 2}
factors:
  policy:
    - {label: off, cache.mode: "off"}
    - {label: shared, cache_cluster: mc1, cache.mode: shared}
`, 2)
	off, shared := s.RunOptions(combos[0], 1, "out", ClusterNames{}), s.RunOptions(combos[1], 1, "out", ClusterNames{})
	if len(off.Tiers) != 0 || len(shared.Tiers) != 1 || shared.Tiers[0].Cluster != "mc1" || shared.Tiers[0].Engine != "" {
		t.Fatalf("tiers: off %+v, shared %+v", off.Tiers, shared.Tiers)
	}
	if got := strings.Join(shared.Args, " "); !strings.Contains(got, "--cache-cluster mc1") {
		t.Errorf("command line %q", got)
	}
	app := combos[1].App
	if app == nil || app.Options["cache_cluster"] != "mc1" || app.Options["set.cache.mode"] != "shared" {
		t.Fatalf("app cluster %+v", app)
	}
	if combos[0].App.Options["cache_cluster"] != "" || combos[0].App.Options["set.cache.mode"] != "off" {
		t.Fatalf("app cluster without a cache %+v", combos[0].App)
	}
}

// TestCacheTierCluster: a `clusters:` entry of an engine a `cache` level
// names is the cache tier's cluster: the combinations with that cache get
// it (a group of their own, the run's --cache-cluster, the app servers'
// cache), it does not become the store's default engine, and an entry no
// run uses as store or cache is refused.
func TestCacheTierCluster(t *testing.T) {
	s, combos := matrixOf(t, "cache.yaml", `
name: cache
scenario: records
app: {servers: 2}
clusters:
  redis: {}
  memcached: {}
factors:
  policy:
    - {label: off, cache.mode: "off"}
    - {label: redis, cache: redis, cache.mode: shared}
    - {label: memcached, cache: memcached, cache.mode: shared}
    - {label: given, cache: redis, cache_target: "redis://127.0.0.1:6379", cache.mode: shared}
`, 4)
	if got := s.DefaultEngine(); got != "sqlite" {
		t.Errorf("default engine %s: a cache cluster was taken for the store's", got)
	}
	if combos[0].Cache != nil || combos[3].Cache != nil {
		t.Errorf("a cache cluster for no cache or a given target: %+v %+v", combos[0].Cache, combos[3].Cache)
	}
	if combos[1].Cache == nil || combos[1].Cache.Engine != "redis" || combos[2].Cache == nil || combos[2].Cache.Engine != "memcached" {
		t.Fatalf("cache clusters %+v %+v", combos[1].Cache, combos[2].Cache)
	}
	gs := groups(combos)
	if len(gs) != 4 || gs[1].cache == nil || gs[1].cache.Engine != "redis" {
		t.Fatalf("groups %+v", gs)
	}
	o := s.RunOptions(combos[1], 1, "out", ClusterNames{Run: "web", Cache: "xp-redis-1"})
	if len(o.Tiers) != 1 || o.Tiers[0].Cluster != "xp-redis-1" || o.Tiers[0].Engine != "redis" || o.Cluster != "web" {
		t.Fatalf("run options: cluster %q, tiers %+v", o.Cluster, o.Tiers)
	}
	if got := strings.Join(o.Args, " "); !strings.Contains(got, "--cache redis --cache-cluster xp-redis-1") {
		t.Errorf("command line %q", got)
	}

	bad, err := Parse("bad.yaml", []byte("name: x\nscenario: ycsb\nengine: sqlite\nclusters:\n  redis: {}\nfactors:\n  cache: [none, memory]\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "no run uses engine redis, as its store or its cache") {
		t.Errorf("an unused cache cluster: %v", err)
	}
}

// TestAppNetworkFactor: an app tier's servers may each have a network of
// their own (app.netns) with emulated links that a factor varies
// (app.link, which implies it), as cluster up app --netns --link; a bad
// value is refused with its place.
func TestAppNetworkFactor(t *testing.T) {
	_, combos := matrixOf(t, "links.yaml", `
name: links
scenario: records
app: {servers: 2, netns: true}
factors:
  app.link: [none, "delay=2ms"]
`, 2)
	plain, slow := combos[0].App, combos[1].App
	if plain == nil || slow == nil || !plain.Netns || len(plain.LinkSpecs()) != 0 || strings.Join(slow.LinkSpecs(), ";") != "delay=2ms" {
		t.Fatalf("app clusters %+v and %+v", plain, slow)
	}
	if got := appShape(slow, "pg1"); !strings.Contains(got, "links delay=2ms") {
		t.Errorf("progress line %q", got)
	}
	for _, c := range []struct{ bad, says string }{
		{"app: {netns: maybe}", "bad.yaml:3"},
		{"factors:\n  app.link: [\"delay=0.2ms\"]", "bad.yaml:4"},
	} {
		_, err := Parse("bad.yaml", []byte("name: x\nscenario: records\n"+c.bad+"\n"), "")
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v", c.bad, err)
		}
	}
}

// matrixOf parses the experiment file src and builds its combinations,
// which must be n.
func matrixOf(t *testing.T, name, src string, n int) (*Spec, []*Combination) {
	t.Helper()
	s, err := Parse(name, []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	combos := mustMatrix(t, s, n)
	return s, combos
}
