package cli

import (
	"context"
	"path/filepath"
	"testing"

	// A test-only cache tier: the proof that registering a cache engine is
	// all the cached scenarios need.
	_ "github.com/scalelab/scalelab/engine/enginetest/throwawaycache"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestThrowawayCache: ycsb, social and mhealth read through a cache tier
// no scenario knows (engine/enginetest/throwawaycache), with hits and
// misses counted; when the cache loses its invalidations, the scenarios'
// stale-read checks count the stale reads it serves.
func TestThrowawayCache(t *testing.T) {
	t.Parallel()
	for _, scen := range []string{"ycsb", "social", "mhealth"} {
		var plainStale float64
		for _, lose := range []bool{false, true} {
			dir := filepath.Join(t.TempDir(), "out")
			args := []string{"run", scen, "--engine", "memory", "--cache", "throwawaycache", "--users", "4",
				"--duration", "1s", "--out", dir, "--progress", "off"}
			if lose {
				args = append(args, "--set", "cache.throwawaycache.lose_deletes=true")
			}
			code, out, errs := run(t, context.Background(), args...)
			r := resultstest.Read(t, dir)
			c, _ := r.ScenarioReport["cache"].(map[string]any)
			hits, _ := c["hits"].(float64)
			misses, _ := c["misses"].(float64)
			stale, staleOK := c["stale_reads"].(float64)
			t.Logf("%s, lose_deletes=%v: exit %d, hit rate %v (%v hits, %v misses), %v stale reads", scen, lose, code, c["hit_rate"], hits, misses, stale)
			if c["mode"] != "shared" || c["engine"] != "throwawaycache" || hits <= 0 || misses <= 0 || !staleOK {
				t.Errorf("%s, lose_deletes=%v: exit %d, cache report %v\n%s\n%s", scen, lose, code, c, out, errs)
				continue
			}
			if !lose {
				// cache-aside's own race (a read fills the cache with
				// what it read before a concurrent write dropped the
				// key) leaves a rare stale read with 4 users; it is
				// counted, as it should be, but stays rare
				plainStale = stale
				if code != 0 || stale > (hits+misses)/1000 {
					t.Errorf("%s: exit %d, %v stale reads in %v reads from a cache that drops what is written\n%s", scen, code, stale, hits+misses, errs)
				}
				continue
			}
			if stale <= plainStale {
				t.Errorf("%s: a cache that loses its invalidations served %v counted stale reads, against %v with one that keeps them (exit %d)", scen, stale, plainStale, code)
			}
		}
	}
}
