package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// cacheRole is the role of a cache tier in run.json's tiers
// (scenario.RoleCache).
const cacheRole = "cache"

// cacheReport is what a scenario with a cache in front of its store
// reports of it (scenario_report.cache): the mode (off, local, shared),
// the cache's engine ("" for a local cache), its hits, misses and the
// stale reads it served, per operation and per wall-clock second.
type cacheReport struct {
	Mode   string `json:"mode"`
	Engine string `json:"engine"`
	cacheCounts
	ByOperation map[string]cacheOp `json:"by_operation"`
	PerSecond   []cacheSecond      `json:"per_second"`
	Note        string             `json:"note"`
}

// cacheCounts are the reads through a cache: hits, misses, and stale
// reads (a read that returned an older value than the store held).
type cacheCounts struct {
	Hits       float64  `json:"hits"`
	Misses     float64  `json:"misses"`
	HitRate    *float64 `json:"hit_rate"` // nil when not reported
	StaleReads float64  `json:"stale_reads"`
	// CacheErrors are reads the cache failed and the store answered.
	CacheErrors float64 `json:"cache_errors"`
}

// hitRate is the reported hit rate, else hits / (hits + misses); NaN
// when there was neither (a rate of 0 over no reads is no rate).
func (c cacheCounts) hitRate() float64 {
	n := c.Hits + c.Misses
	if c.HitRate != nil && (n > 0 || *c.HitRate > 0) {
		return *c.HitRate
	}
	if n > 0 {
		return c.Hits / n
	}
	return math.NaN()
}

// cacheOp is one operation's reads through the cache, with the mean time
// of a call to the cache and to the store.
type cacheOp struct {
	cacheCounts
	CacheMs    *float64 `json:"cache_ms"`
	StoreMs    *float64 `json:"store_ms"`
	CacheCalls float64  `json:"cache_calls"`
	StoreCalls float64  `json:"store_calls"`
}

// cacheSecond counts one wall-clock second (Unix seconds).
type cacheSecond struct {
	Unix       float64 `json:"unix"`
	Hits       float64 `json:"hits"`
	Misses     float64 `json:"misses"`
	StaleReads float64 `json:"stale_reads"`
	// CacheErrors are reads the cache failed and the store answered.
	CacheErrors float64 `json:"cache_errors"`
}

// cacheKeys are the keys of scenario_report.cache that the cache section
// shows; any other stays for the generic scenario tables.
var cacheKeys = map[string]bool{"mode": true, "engine": true, "hits": true, "misses": true, "hit_rate": true,
	"stale_reads": true, "cache_errors": true, "by_operation": true, "per_second": true, "note": true}

// parseCache reads scenario_report.cache. Without one, or with one of
// another shape, it returns nil and rep as it is; else the cache report
// and rep without the keys read here (keys it does not know stay under
// "cache").
func parseCache(rep map[string]any) (*cacheReport, map[string]any) {
	raw, ok := rep["cache"]
	if !ok {
		return nil, rep
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, rep
	}
	var c cacheReport
	var all map[string]any
	if json.Unmarshal(b, &c) != nil || json.Unmarshal(b, &all) != nil || len(all) == 0 {
		return nil, rep
	}
	rest := make(map[string]any, len(rep))
	for k, v := range rep {
		if k != "cache" {
			rest[k] = v
		}
	}
	left := map[string]any{}
	for k, v := range all {
		if !cacheKeys[k] {
			left[k] = v
		}
	}
	if len(left) > 0 {
		rest["cache"] = left
	}
	return &c, rest
}

// summary is the cache's one line: "cache (redis, shared): hit rate
// 90.0% (900 hits, 100 misses), 3 stale reads".
func (c *cacheReport) summary() string {
	var what []string
	for _, s := range []string{c.Engine, c.Mode} {
		if s != "" {
			what = append(what, s)
		}
	}
	line := "cache"
	if len(what) > 0 {
		line += " (" + strings.Join(what, ", ") + ")"
	}
	if rate := c.hitRate(); !math.IsNaN(rate) {
		line += fmt.Sprintf(": hit rate %.1f%% (%s hits, %s misses)", 100*rate, fmtCount(c.Hits), fmtCount(c.Misses))
	} else {
		line += ": no reads went through the cache"
	}
	line += fmt.Sprintf(", %s stale read%s", fmtCount(c.StaleReads), plural(c.StaleReads))
	if c.CacheErrors > 0 {
		line += fmt.Sprintf(", %s read%s the cache failed (the store answered)", fmtCount(c.CacheErrors), plural(c.CacheErrors))
	}
	return line
}

// plural is "s" unless n is 1.
func plural(n float64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// cacheView is the run page's cache section.
type cacheView struct {
	Summary string
	Note    string
	Charts  []chart // hit rate, then stale reads, over time
	Tables  []figTable
}

// cacheSection builds the cache section of a run page from the
// scenario's cache report and the cache tier's server stats, on the
// run's timeline tl (buckets of width seconds, as the latency charts).
// It returns nil without either, and the scenario report without what
// the section shows.
func cacheSection(r *results.Run, dir string, tl []tick, width float64) (*cacheView, map[string]any) {
	c, rest := parseCache(r.ScenarioReport)
	v := &cacheView{}
	if c != nil {
		v.Summary, v.Note = c.summary()+".", c.Note
		v.Charts = cacheCharts(c, r, dir, tl, width)
		if t := cacheOpTable(c); t != nil {
			v.Tables = append(v.Tables, *t)
		}
	}
	v.Tables = append(v.Tables, cacheServerTables(r)...)
	if c == nil && len(v.Tables) == 0 {
		return nil, rest
	}
	return v, rest
}

// loadStart is t = 0 of the run's charts over time as a wall-clock
// instant: run.json's load_start, a segment's, else the interval log's
// start (to the second); ok is false when none is known.
func loadStart(r *results.Run, dir string) (t time.Time, exact, ok bool) {
	if r.LoadStart != nil {
		return *r.LoadStart, true, true
	}
	if r.Segment != nil && r.Segment.LoadStart != nil {
		return *r.Segment.LoadStart, true, true
	}
	f, err := os.Open(filepath.Join(dir, results.HlogFile))
	if err != nil {
		return t, false, false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	if t, err = metrics.HlogStart(head[:n]); err != nil {
		return t, false, false
	}
	return t, false, true
}

// cacheCharts draws the hit rate and the stale reads per second on the
// time axis of the run's latency charts (cachePoints), with the run's
// warm-up and fault markers.
func cacheCharts(c *cacheReport, r *results.Run, dir string, tl []tick, width float64) []chart {
	if len(c.PerSecond) == 0 {
		return nil
	}
	xmax := timelineEnd(tl)
	start, exact, aligned := loadStart(r, dir)
	t0 := float64(start.UnixNano()) / 1e9
	var notes []string
	switch {
	case !aligned:
		t0 = math.NaN()
		notes = append(notes, "The run's load start is unknown: this time axis starts at the cache's first second, not at the latency charts' start.")
	case !exact:
		notes = append(notes, "Placed on the run's time axis from the interval log's start, which is known to the second only.")
	}
	width = max(width, 1)
	if width > 1 {
		notes = append(notes, fmt.Sprintf("Each point covers %s: hits and misses are summed, stale reads averaged over its seconds.", fmtSeconds(width)))
	}
	hit := lineSeries{Name: "hit rate", Color: color(0)}
	stale := lineSeries{Name: "stale reads per second", Color: color(1)}
	failed := lineSeries{Name: "reads the cache failed per second", Color: color(3)}
	for _, p := range cachePoints(c.PerSecond, t0, xmax, width) {
		hit.X, hit.Y = append(hit.X, p.X), append(hit.Y, p.HitPct)
		stale.X, stale.Y = append(stale.X, p.X), append(stale.Y, p.StalePerS)
		failed.X, failed.Y = append(failed.X, p.X), append(failed.Y, p.ErrorsPerS)
	}
	title, series, what := "Stale reads over time", []lineSeries{stale}, "Reads the scenario found stale (older than a write it knew of), per second."
	if c.CacheErrors > 0 {
		title, series = "Stale reads and cache failures over time", append(series, failed)
		what += " Reads the cache failed (down, timed out), which the store answered instead, per second."
	}
	bands := warmupBand(r.Load.WarmupS)
	hs := lineSpec{Title: "Cache hit rate over time", XLabel: "time since start", XZero: true, XMax: xmax, YLabel: "hit rate", XFmt: fmtSeconds,
		YFmt: func(v float64) string { return fmtNum(v) + "%" }, Bands: bands, Series: []lineSeries{hit},
		Note: joinNotes(append([]string{"Hits / (hits + misses) of the reads through the cache in each second, on the time axis of the latency charts; " +
			"a gap is a second without such a read."}, notes...)...),
		Empty: "no read went through the cache during the load"}
	ss := lineSpec{Title: title, XLabel: "time since start", XZero: true, XMax: xmax, YLabel: "reads per second", XFmt: fmtSeconds,
		Bands: bands, Series: series,
		Note:  joinNotes(append([]string{what}, notes...)...),
		Empty: "no second of the cache report falls within the load"}
	charts := []chart{hs.render(), ss.render()}
	marks := faultMarks(r)
	for i := range charts {
		markChart(&charts[i], marks)
	}
	return charts
}

// cachePoint is one point of the cache charts: the hit rate in % (NaN
// without reads through the cache) and the stale reads per second.
type cachePoint struct {
	X, HitPct, StalePerS, ErrorsPerS float64
}

// cachePoints places each wall-clock second at its end in seconds since
// the load started at t0 (Unix seconds; NaN when unknown: since the first
// second's start), as series.csv places an interval at its end. Seconds
// wholly before the load (the data load) or after the timeline's end xmax,
// or overlapping the load by less than a tenth of a second, are left out, the last one is drawn at xmax; seconds are bucketed by
// width as the latency charts' intervals are, and a stretch of more than half a
// bucket without seconds breaks the hit-rate line.
func cachePoints(per []cacheSecond, t0, xmax, width float64) []cachePoint {
	secs := append([]cacheSecond(nil), per...)
	sort.Slice(secs, func(i, j int) bool { return secs[i].Unix < secs[j].Unix })
	aligned := !math.IsNaN(t0)
	if !aligned && len(secs) > 0 {
		t0 = secs[0].Unix
	}
	type bucket struct {
		key, x, hits, misses, stale, errs float64
		n                                 int
	}
	var buckets []bucket
	for _, s := range secs {
		x := s.Unix + 1 - t0
		if aligned && (x <= 0 || (xmax > 0 && (x-1 >= xmax || tooShort(xmax-(x-1), 1)))) {
			continue // before the load, or after it but for a few milliseconds (tooShort)
		}
		key := math.Floor((x - 1e-6) / width)
		if n := len(buckets); n == 0 || buckets[n-1].key != key {
			buckets = append(buckets, bucket{key: key})
		}
		if aligned && xmax > 0 {
			x = math.Min(x, xmax)
		}
		b := &buckets[len(buckets)-1]
		b.x = x
		b.hits += s.Hits
		b.misses += s.Misses
		b.stale += s.StaleReads
		b.errs += s.CacheErrors
		b.n++
	}
	out := make([]cachePoint, 0, len(buckets))
	for i, b := range buckets {
		if i > 0 && b.x-buckets[i-1].x > 1.5*width {
			out = append(out, cachePoint{X: buckets[i-1].x + width, HitPct: math.NaN(), StalePerS: math.NaN(), ErrorsPerS: math.NaN()})
		}
		p := cachePoint{X: b.x, HitPct: math.NaN(), StalePerS: b.stale / float64(b.n), ErrorsPerS: b.errs / float64(b.n)}
		if b.hits+b.misses > 0 {
			p.HitPct = 100 * b.hits / (b.hits + b.misses)
		}
		out = append(out, p)
	}
	return out
}

// cacheOpTable lists each operation's reads through the cache, with a
// total row when there are several operations.
func cacheOpTable(c *cacheReport) *figTable {
	if len(c.ByOperation) == 0 {
		return nil
	}
	t := &figTable{Title: "Cache by operation", Cols: []string{"operation", "hits", "misses", "hit rate %", "stale reads", "mean cache ms", "mean store ms"},
		Note: "Reads through the cache per operation; the mean times are per call to the cache and per call to the store (a miss, a write)."}
	ops := slices.Sorted(maps.Keys(c.ByOperation))
	failures := c.CacheErrors > 0
	for _, o := range c.ByOperation {
		failures = failures || o.CacheErrors > 0
	}
	if failures {
		t.Cols = append(t.Cols, "cache failed")
		t.Note += " Cache failed: reads the cache failed (down, timed out) and the store answered (cache.on_error=store); they are neither hits nor misses."
	}
	row := func(cells []string, n cacheCounts) []string {
		if failures {
			cells = append(cells, fmtCount(n.CacheErrors))
		}
		return cells
	}
	var sum cacheCounts
	for _, op := range ops {
		o := c.ByOperation[op]
		t.Rows = append(t.Rows, row([]string{op, fmtCount(o.Hits), fmtCount(o.Misses), fmtRatePct(o.hitRate()), fmtCount(o.StaleReads),
			meanMs(o.CacheMs, o.CacheCalls), meanMs(o.StoreMs, o.StoreCalls)}, o.cacheCounts))
		sum.Hits += o.Hits
		sum.Misses += o.Misses
		sum.StaleReads += o.StaleReads
		sum.CacheErrors += o.CacheErrors
	}
	if len(ops) > 1 {
		if c.Hits+c.Misses+c.StaleReads+c.CacheErrors > 0 {
			sum = c.cacheCounts
		}
		t.Rows = append(t.Rows, row([]string{"total", fmtCount(sum.Hits), fmtCount(sum.Misses), fmtRatePct(sum.hitRate()), fmtCount(sum.StaleReads), "", ""}, sum))
	}
	return t
}

// meanMs formats a mean time per call; "-" when missing, or 0 over no
// calls.
func meanMs(v *float64, calls float64) string {
	if v == nil || (*v == 0 && calls == 0) {
		return "-"
	}
	return ms(v)
}

// cacheStatOrder are the statistics a cache's server table shows first:
// hits, misses, evictions, memory (Redis and memcached names).
var cacheStatOrder = []string{"keyspace_hits", "get_hits", "keyspace_misses", "get_misses", "evicted_keys", "evictions",
	"used_memory", "used_memory_rss", "bytes", "limit_maxbytes", "curr_items", "expired_keys"}

// statRank orders a statistic's name ("redis.keyspace_hits"): the
// names of cacheStatOrder in that order, then other hits, misses,
// evictions and memory figures, then the rest.
func statRank(name string) int {
	_, base, ok := strings.Cut(name, ".")
	if !ok {
		base = name
	}
	for i, s := range cacheStatOrder {
		if base == s {
			return i
		}
	}
	n := len(cacheStatOrder)
	for i, s := range []string{"hit", "miss", "evict", "memory"} {
		if strings.Contains(base, s) {
			return n + i
		}
	}
	return n + 4
}

// cacheServerTables lists what each cache tier's server said about itself
// before and after the load (run.json tiers[].stats).
func cacheServerTables(r *results.Run) []figTable {
	var out []figTable
	for _, tier := range r.Tiers {
		st := tier.Stats
		if tier.Role != cacheRole || st == nil {
			continue
		}
		seen := map[string]bool{}
		var names []string
		for _, m := range []map[string]float64{st.Before, st.After} {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					names = append(names, k)
				}
			}
		}
		sort.Slice(names, func(i, j int) bool {
			if a, b := statRank(names[i]), statRank(names[j]); a != b {
				return a < b
			}
			return names[i] < names[j]
		})
		server := tier.Engine
		if s := tier.Server; s != nil && s.Version != "" && s.Version != "n/a" {
			server += " " + s.Version
		}
		t := figTable{Title: "Cache server before and after", Cols: []string{"statistic", "before", "after", "delta"},
			Note: "What the cache's server (" + server + ") said about itself right before the load and right after it, warm-up included. " +
				"Counters count from the server's start, so a delta is what happened during the load (with any other client's use of the server); gauges (memory, items, clients) are values at that moment."}
		for _, k := range names {
			t.Rows = append(t.Rows, []string{k, statValue(st.Before, k), statValue(st.After, k), statValue(st.Delta, k)})
		}
		if rate := serverHitRate(st.Delta); !math.IsNaN(rate) {
			t.Note += fmt.Sprintf(" The server's own hit rate over the load: %.1f%%.", 100*rate)
		}
		out = append(out, t)
	}
	return out
}

// serverHitRate is hits / (hits + misses) of a server's deltas (Redis
// keyspace, memcached gets); NaN without them.
func serverHitRate(delta map[string]float64) float64 {
	for k, h := range delta {
		pre, ok := strings.CutSuffix(k, "keyspace_hits")
		miss := "keyspace_misses"
		if !ok {
			pre, ok = strings.CutSuffix(k, "get_hits")
			miss = "get_misses"
		}
		if m, found := delta[pre+miss]; ok && found && h+m > 0 {
			return h / (h + m)
		}
	}
	return math.NaN()
}

// statValue formats m[k], "-" when m has no k.
func statValue(m map[string]float64, k string) string {
	v, ok := m[k]
	if !ok {
		return "-"
	}
	return fmtCount(v)
}

// fmtCount formats a count exactly ("1234567"), and other values with up
// to three decimals.
func fmtCount(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 1:
		return trimNum(v, 3)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// fmtRatePct formats a fraction as a percentage with one decimal ("90.0").
func fmtRatePct(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return strconv.FormatFloat(100*f, 'f', 1, 64)
}
