package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/results"
)

// cacheRun writes a synthetic 20-second run of two operations with a
// shared Redis cache: the scenario's cache report (as a live run hands it
// over: Go maps and int64 counts), its seconds from 3 s before the load
// (the data load) to 3 s after it, and the cache server's stats before
// and after. Each second of the load has 9 hits and 1 miss, except the
// 6th (no read) and the 11th (5 hits, 5 misses, 2 stale reads).
func cacheRun(t *testing.T, dir string, loadStart time.Time) *results.Run {
	t.Helper()
	r, _ := synth{intervals: 20, ops: []string{"read", "update"}, perOp: 50}.write(t, dir)
	if !loadStart.IsZero() {
		r.LoadStart = &loadStart
	}
	var per []any
	for i := int64(-3); i < 23; i++ {
		h, m, s := int64(9), int64(1), int64(0)
		switch i {
		case 5:
			h, m = 0, 0
		case 10:
			h, m, s = 5, 5, 2
		}
		per = append(per, map[string]any{"unix": r.Start.Unix() + i, "hits": h, "misses": m, "stale_reads": s})
	}
	r.ScenarioReport = map[string]any{
		"stale_reads": map[string]int64{"read": 3},
		"cache": map[string]any{
			"mode": "shared", "engine": "redis", "hits": int64(900), "misses": int64(100), "hit_rate": 0.9, "stale_reads": int64(3),
			"fill_errors": int64(2),
			"by_operation": map[string]any{
				"read":   map[string]any{"hits": 900, "misses": 100, "hit_rate": 0.9, "stale_reads": 3, "cache_ms": 0.21, "store_ms": 1.3, "cache_calls": 1000, "store_calls": 100},
				"update": map[string]any{"hits": 0, "misses": 0, "hit_rate": 0, "cache_ms": 0, "cache_calls": 0, "store_ms": 2.5, "store_calls": 40},
			},
			"per_second": per,
			"note":       "cache-aside, invalidated on update",
		},
	}
	r.Tiers = []results.Tier{{Role: "cache", Engine: "redis", Server: &results.Server{Version: "7.0.15"},
		Stats: results.NewTierStats(
			map[string]float64{"redis.total_commands_processed": 50, "redis.used_memory": 1000000, "redis.keyspace_misses": 10, "redis.keyspace_hits": 20, "redis.evicted_keys": 0, "redis.mem_fragmentation_ratio": 1.5},
			map[string]float64{"redis.total_commands_processed": 2150, "redis.used_memory": 1500000, "redis.keyspace_misses": 110, "redis.keyspace_hits": 920, "redis.evicted_keys": 7, "redis.mem_fragmentation_ratio": 1.25})}}
	return r
}

// TestCachePage: a run with a cache gets, right after its latency charts,
// the hit rate and the stale reads over time on the latency charts' time
// axis, the table per operation, the server's stats before and after, and
// the terminal line; the generic scenario tables no longer show the cache
// (but keep what the cache section does not read).
func TestCachePage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) // synth's
	r := cacheRun(t, dir, start)
	v := buildRunView(r, dir)
	if v.Cache == nil || len(v.Cache.Charts) != 2 || len(v.Cache.Tables) != 2 {
		t.Fatalf("cache section %+v", v.Cache)
	}
	if v.Cache.Summary != "cache (redis, shared): hit rate 90.0% (900 hits, 100 misses), 3 stale reads." || v.Cache.Note != "cache-aside, invalidated on update" {
		t.Errorf("summary %q, note %q", v.Cache.Summary, v.Cache.Note)
	}
	hit, stale := v.Cache.Charts[0], v.Cache.Charts[1]
	if hit.Title != "Cache hit rate over time" || stale.Title != "Stale reads over time" || hit.frame == nil || stale.frame == nil {
		t.Fatalf("charts %q (%s), %q (%s)", hit.Title, hit.Empty, stale.Title, stale.Empty)
	}
	for _, c := range []chart{hit, stale} {
		if c.frame.xa != v.Latency[0].frame.xa {
			t.Errorf("%s: time axis %+v, the latency chart's %+v", c.Title, c.frame.xa, v.Latency[0].frame.xa)
		}
	}

	// the points: second i of the load ends at i+1 s; the data load's
	// seconds and those after the load are left out
	pts := cachePoints(parseOrFail(t, r).PerSecond, float64(start.Unix()), 20, 1)
	if len(pts) != 20 || pts[0].X != 1 || pts[19].X != 20 {
		t.Fatalf("%d points from %v to %v, want 20 from 1 to 20: %+v", len(pts), pts[0].X, pts[len(pts)-1].X, pts)
	}
	for i, p := range pts {
		wantHit, wantStale := 90.0, 0.0
		switch i {
		case 5:
			wantHit = math.NaN()
		case 10:
			wantHit, wantStale = 50, 2
		}
		if !sameFloat(p.HitPct, wantHit) || p.StalePerS != wantStale {
			t.Errorf("second %d: hit rate %v%%, %v stale reads/s; want %v%%, %v", i, p.HitPct, p.StalePerS, wantHit, wantStale)
		}
	}

	ops := v.Cache.Tables[0]
	if ops.Title != "Cache by operation" || strings.Join(ops.Cols, "|") != "operation|hits|misses|hit rate %|stale reads|mean cache ms|mean store ms" {
		t.Fatalf("table %q %q", ops.Title, ops.Cols)
	}
	wantRows := []string{"read|900|100|90.0|3|0.210|1.30", "update|0|0|-|0|-|2.50", "total|900|100|90.0|3||"}
	if len(ops.Rows) != len(wantRows) {
		t.Fatalf("rows %q", ops.Rows)
	}
	for i, w := range wantRows {
		if got := strings.Join(ops.Rows[i], "|"); got != w {
			t.Errorf("row %d %q, want %q", i, got, w)
		}
	}

	srv := v.Cache.Tables[1]
	if srv.Title != "Cache server before and after" || !strings.Contains(srv.Note, "redis 7.0.15") || !strings.Contains(srv.Note, "own hit rate over the load: 90.0%") {
		t.Errorf("server table %q: %s", srv.Title, srv.Note)
	}
	wantSrv := []string{"redis.keyspace_hits|20|920|900", "redis.keyspace_misses|10|110|100", "redis.evicted_keys|0|7|7", "redis.used_memory|1000000|1500000|500000",
		"redis.mem_fragmentation_ratio|1.5|1.25|-0.25", "redis.total_commands_processed|50|2150|2100"}
	if len(srv.Rows) != len(wantSrv) {
		t.Fatalf("server rows %q", srv.Rows)
	}
	for i, w := range wantSrv {
		if got := strings.Join(srv.Rows[i], "|"); got != w {
			t.Errorf("server row %d %q, want %q", i, got, w)
		}
	}

	// the generic scenario tables keep the rest, not the cache's figures
	for _, tb := range v.Scenario {
		for _, row := range tb.Rows {
			if strings.Join(row, "|") == "hits|900" || strings.Contains(tb.Title, "per_second") || strings.Contains(tb.Title, "by_operation") {
				t.Errorf("the generic table %q shows the cache: %q", tb.Title, row)
			}
		}
	}
	page := renderPage(t, r, dir)
	for _, w := range []string{"<h2>Cache</h2>", "cache (redis, shared): hit rate 90.0% (900 hits, 100 misses), 3 stale reads.",
		"Cache hit rate and stale reads over time", "Cache by operation", "Cache server before and after", "fill_errors", "stale_reads"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	lat, cache, tput := strings.Index(page, "<h2>Latency over time</h2>"), strings.Index(page, "<h2>Cache</h2>"), strings.Index(page, "<h2>Throughput and errors over time</h2>")
	if !(lat < cache && cache < tput) {
		t.Errorf("the cache section is at %d, not right after the latency charts (%d, throughput at %d)", cache, lat, tput)
	}
	var out bytes.Buffer
	Terminal(&out, r)
	if !strings.Contains(out.String(), "\ncache (redis, shared): hit rate 90.0% (900 hits, 100 misses), 3 stale reads\n") {
		t.Errorf("terminal summary lacks the cache line:\n%s", out.String())
	}
}

// TestCacheTimeAxis: the cache's wall-clock seconds land on the run's
// time axis wherever the load started within a second, from run.json's
// load_start or, without it, the interval log's start (to the second);
// a long run's seconds are bucketed as its intervals are.
func TestCacheTimeAxis(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	per := []cacheSecond{{Unix: float64(start.Unix()), Hits: 3, Misses: 1}, {Unix: float64(start.Unix() + 1), Hits: 1, Misses: 1, StaleReads: 4, CacheErrors: 2},
		{Unix: float64(start.Unix() + 4), Hits: 1}, {Unix: float64(start.Unix() + 5), Misses: 1}}
	cases := []struct {
		name      string
		t0, width float64
		want      []cachePoint
	}{
		{"load started 0.4 s into a second", float64(start.Unix()) + 0.4, 1,
			[]cachePoint{{0.6, 75, 0, 0}, {1.6, 50, 4, 2}, {2.6, math.NaN(), math.NaN(), math.NaN()}, {4.6, 100, 0, 0}, {5, 0, 0, 0}}},
		{"unknown start", math.NaN(), 1,
			[]cachePoint{{1, 75, 0, 0}, {2, 50, 4, 2}, {3, math.NaN(), math.NaN(), math.NaN()}, {5, 100, 0, 0}, {6, 0, 0, 0}}},
		{"buckets of 3 s", float64(start.Unix()), 3,
			[]cachePoint{{2, 4.0 / 6 * 100, 2, 1}, {5, 100, 0, 0}}},
	}
	for _, c := range cases {
		got := cachePoints(per, c.t0, 5, c.width)
		if len(got) != len(c.want) {
			t.Errorf("%s: points %+v, want %+v", c.name, got, c.want)
			continue
		}
		for i, p := range got {
			w := c.want[i]
			if math.Abs(p.X-w.X) > 1e-6 || !sameFloat(p.HitPct, w.HitPct) || !sameFloat(p.StalePerS, w.StalePerS) || !sameFloat(p.ErrorsPerS, w.ErrorsPerS) {
				t.Errorf("%s: point %d %+v, want %+v", c.name, i, p, w)
			}
		}
	}

	dir := t.TempDir()
	r := cacheRun(t, dir, time.Time{})
	got, exact, ok := loadStart(r, dir)
	if !ok || exact || !got.Equal(start) {
		t.Errorf("load start from the interval log: %v (exact %t, found %t), want %v to the second", got, exact, ok, start)
	}
	v := buildRunView(r, dir)
	if v.Cache == nil || len(v.Cache.Charts) != 2 || !strings.Contains(v.Cache.Charts[0].Note, "known to the second only") {
		t.Fatalf("cache charts without load_start: %+v", v.Cache)
	}
	if _, _, ok := loadStart(&results.Run{}, t.TempDir()); ok {
		t.Error("a load start found without run.json's or an interval log")
	}
}

// TestNoCache: a run without a cache shows none of the cache's figures;
// server stats alone give only their table.
func TestNoCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, _ := synth{intervals: 5, ops: []string{"read"}, perOp: 50}.write(t, dir)
	r.ScenarioReport = map[string]any{"stale_reads": map[string]int64{"read": 3}}
	r.Tiers = []results.Tier{{Role: "app", Engine: "scalelab serve records", Stats: results.NewTierStats(map[string]float64{"x.hits": 1}, nil)}}
	page := renderPage(t, r, dir)
	for _, n := range []string{"<h2>Cache</h2>", "Cache hit rate", "Stale reads over time", "Cache by operation", "Cache server before and after"} {
		if strings.Contains(page, n) {
			t.Errorf("a run without a cache shows %q", n)
		}
	}
	if !strings.Contains(page, "stale_reads") {
		t.Error("the scenario's own figures are gone")
	}
	var out bytes.Buffer
	Terminal(&out, r)
	if strings.Contains(out.String(), "cache") {
		t.Errorf("terminal summary mentions a cache:\n%s", out.String())
	}

	r.Tiers = []results.Tier{{Role: "cache", Engine: "memcached", Stats: results.NewTierStats(
		map[string]float64{"memcached.get_hits": 5, "memcached.get_misses": 5}, map[string]float64{"memcached.get_hits": 35, "memcached.get_misses": 15})}}
	v := buildRunView(r, dir)
	if v.Cache == nil || len(v.Cache.Charts) != 0 || len(v.Cache.Tables) != 1 || v.Cache.Summary != "" ||
		!strings.Contains(v.Cache.Tables[0].Note, "own hit rate over the load: 75.0%") {
		t.Errorf("server stats without a cache report: %+v", v.Cache)
	}
}

func parseOrFail(t *testing.T, r *results.Run) *cacheReport {
	t.Helper()
	c, _ := parseCache(r.ScenarioReport)
	if c == nil {
		t.Fatal("no cache report")
	}
	return c
}

func renderPage(t *testing.T, r *results.Run, dir string) string {
	t.Helper()
	path := filepath.Join(dir, results.ReportFile)
	if err := WriteHTML(path, r, dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameFloat is equality with NaN equal to NaN.
func sameFloat(a, b float64) bool {
	return a == b || math.IsNaN(a) && math.IsNaN(b)
}
