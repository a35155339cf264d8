package promsource

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/telemetry"
)

// Client queries one Prometheus server for a mapping's tiers.
type Client struct {
	m   *Mapping
	api v1.API
}

// bearer adds the token to every request; it never appears elsewhere.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// NewClient connects nothing yet: it builds the HTTP client of m's
// server, with its bearer token when one is given.
func NewClient(m *Mapping) (*Client, error) {
	tok, err := m.token()
	if err != nil {
		return nil, err
	}
	var rt http.RoundTripper = api.DefaultRoundTripper
	if tok != "" {
		rt = bearer{token: tok, next: rt}
	}
	c, err := api.NewClient(api.Config{Address: m.URL, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", m.URL, err)
	}
	return &Client{m: m, api: v1.NewAPI(c)}, nil
}

// queryTimeout bounds each query.
const queryTimeout = 10 * time.Second

// Check asks the server whether it answers queries.
func (c *Client) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	if _, _, err := c.api.Query(ctx, "1", time.Now()); err != nil {
		return fmt.Errorf("prometheus at %s does not answer: %w", c.m.URL, err)
	}
	return nil
}

// Result is what the server said about the mapped tiers over a run.
type Result struct {
	Nodes    []telemetry.External
	Stats    []telemetry.ExternalStat
	Observed map[string]bool // tiers with at least one node or figure
	Warnings []string
	Source   results.TelemetrySource
}

// cpuKind says how a CPU metric is read: which labels tell nodes apart,
// where memory and the CPU limit come from.
type cpuKind struct {
	by      string
	extra   []string // matchers added to the CPU selector
	memory  func(s Selector) string
	limit   func(s Selector) string
	sumMode bool // node_cpu: sum non-idle modes per instance
}

func kindOf(metric string) cpuKind {
	switch metric {
	case "node_cpu_seconds_total":
		return cpuKind{by: "instance", extra: []string{`mode!~"idle|iowait|steal"`}, sumMode: true,
			memory: func(s Selector) string {
				return "sum by (instance) (" + s.Of("node_memory_MemTotal_bytes") + ") - sum by (instance) (" + s.Of("node_memory_MemAvailable_bytes") + ")"
			},
			limit: func(s Selector) string {
				return "count by (instance) (" + s.Of("node_cpu_seconds_total", `mode="idle"`) + ")"
			}}
	case "process_cpu_seconds_total":
		return cpuKind{by: "instance, job",
			memory: func(s Selector) string {
				return "sum by (instance, job) (" + s.Of("process_resident_memory_bytes") + ")"
			},
			limit: func(s Selector) string { return "max by (instance, job) (" + s.Of("go_sched_gomaxprocs_threads") + ")" }}
	case "namedprocess_namegroup_cpu_seconds_total":
		return cpuKind{by: "instance, groupname",
			memory: func(s Selector) string {
				return "sum by (instance, groupname) (" + s.Of("namedprocess_namegroup_memory_bytes", `memtype="resident"`) + ")"
			}}
	}
	return cpuKind{by: "instance"}
}

// exporterSeries are the engine exporters' figures a run keeps: the
// postgres_exporter's, redis_exporter's and HAProxy's key ones.
var exporterSeries = []string{
	"pg_up", "pg_stat_database_xact_commit", "pg_stat_database_xact_rollback", "pg_stat_database_blks_hit",
	"pg_stat_database_blks_read", "pg_stat_database_deadlocks", "pg_stat_database_temp_bytes", "pg_stat_database_numbackends",
	"pg_stat_activity_count",
	"redis_commands_processed_total", "redis_connected_clients", "redis_rejected_connections_total", "redis_memory_used_bytes",
	"redis_keyspace_hits_total", "redis_keyspace_misses_total", "redis_evicted_keys_total",
	"haproxy_frontend_current_sessions", "haproxy_backend_current_queue", "haproxy_server_current_queue",
	"haproxy_frontend_http_requests_total", "haproxy_backend_connection_errors_total",
}

// Fetch reads every mapped tier's series over [from, to] at step: CPU
// cores and memory per node, the exporters' figures. A tier whose series
// are missing is a warning, never an error: the run keeps what it
// measured.
func (c *Client) Fetch(ctx context.Context, from, to time.Time, step time.Duration) Result {
	res := Result{Observed: map[string]bool{}, Source: results.TelemetrySource{Kind: "prometheus", URL: c.m.URL, Observe: map[string]string{}}}
	for _, t := range c.m.Tiers {
		for k, v := range t.Given {
			res.Source.Observe[k] = v
		}
	}
	for _, t := range c.m.Tiers {
		if t.CPU != nil {
			c.fetchCPU(ctx, t, from, to, step, &res)
		}
		if t.Exporter != nil {
			c.fetchExporter(ctx, t, from, to, step, &res)
		}
	}
	res.Source.Nodes, res.Source.Series = len(res.Nodes), len(res.Stats)
	res.Source.Warnings = res.Warnings
	return res
}

// scrapeInterval estimates how often the server scrapes the series sel
// selects, from the last minute's raw samples (15 s when it cannot tell).
func (c *Client) scrapeInterval(ctx context.Context, sel string, at time.Time) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, _, err := c.api.Query(ctx, sel+"[1m]", at)
	m, ok := v.(model.Matrix)
	if err != nil || !ok {
		return 15 * time.Second
	}
	var gaps []time.Duration
	for _, s := range m {
		for i := 1; i < len(s.Values); i++ {
			gaps = append(gaps, s.Values[i].Timestamp.Time().Sub(s.Values[i-1].Timestamp.Time()))
		}
	}
	if len(gaps) == 0 {
		return 15 * time.Second
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	return gaps[len(gaps)/2]
}

func (c *Client) rangeQuery(ctx context.Context, q string, from, to time.Time, step time.Duration) (model.Matrix, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, _, err := c.api.QueryRange(ctx, q, v1.Range{Start: from, End: to, Step: step})
	if err != nil {
		return nil, err
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("query %s: a %s, not a range of series", q, v.Type())
	}
	return m, nil
}

// nodeName names a series by the labels that tell nodes apart.
func nodeName(m model.Metric, by string) string {
	var parts []string
	for _, l := range strings.Split(by, ",") {
		if v := m[model.LabelName(strings.TrimSpace(l))]; v != "" {
			parts = append(parts, string(v))
		}
	}
	if len(parts) == 0 {
		return "node"
	}
	return strings.Join(parts, "/")
}

func (c *Client) fetchCPU(ctx context.Context, t *Tier, from, to time.Time, step time.Duration, res *Result) {
	sel := *t.CPU
	k := kindOf(sel.Metric)
	flag := fmt.Sprintf("--observe %s=%s", t.Name, t.Given[t.Name])
	raw := sel.Of(sel.Metric, k.extra...)
	scrape := c.scrapeInterval(ctx, raw, to)
	// a sample spans two scrapes at least: an exporter's CPU seconds are
	// summed over processes in clock ticks (10 ms each) and read a little
	// after the scrape's timestamp (later on a busy machine), which over
	// one scrape interval is too coarse to tell 90 % of a small limit
	step = max(step, 2*scrape)
	q := fmt.Sprintf("sum by (%s) (rate(%s[%s]))", k.by, raw, model.Duration(step+scrape/2))
	cpu, err := c.rangeQuery(ctx, q, from, to, step)
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %v; the %s tier is not observed", flag, err, t.Name))
		return
	}
	if len(cpu) == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: Prometheus at %s has no series %s over the run%s; the %s tier is not observed", flag, c.m.URL, raw, c.hint(ctx, sel, from, to), t.Name))
		return
	}
	mem := map[string]map[model.Time]float64{}
	if k.memory != nil {
		if mm, err := c.rangeQuery(ctx, k.memory(sel), from, to, step); err == nil {
			for _, s := range mm {
				n := nodeName(s.Metric, k.by)
				mem[n] = map[model.Time]float64{}
				for _, p := range s.Values {
					mem[n][p.Timestamp] = float64(p.Value)
				}
			}
		}
	}
	limits := map[string]float64{}
	if k.limit != nil {
		ctx2, cancel := context.WithTimeout(ctx, queryTimeout)
		v, _, err := c.api.Query(ctx2, k.limit(sel), to)
		cancel()
		if vec, ok := v.(model.Vector); err == nil && ok {
			for _, s := range vec {
				limits[nodeName(s.Metric, k.by)] = float64(s.Value)
			}
		}
	}
	var names []string
	for _, s := range cpu {
		n := nodeName(s.Metric, k.by)
		names = append(names, n)
		x := telemetry.External{Tier: t.Name, Name: n, Role: sel.Metric, Source: "prometheus",
			OnThisHost: !k.sumMode && onThisHost(string(s.Metric["instance"]))}
		lim := t.CPUs
		if lim == 0 {
			lim = limits[n]
		}
		if lim > 0 {
			x.Limits = &results.Limits{CPUs: lim}
		}
		for _, p := range s.Values {
			rss := int64(-1)
			if v, ok := mem[n][p.Timestamp]; ok {
				rss = int64(v)
			}
			x.Points = append(x.Points, telemetry.ExternalPoint{At: p.Timestamp.Time(), Cores: float64(p.Value), RSS: rss})
		}
		res.Nodes = append(res.Nodes, x)
		if lim == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: node %s: its CPU limit is unknown (no series says it), so it is never judged at its limit; give --observe %s.cpus=N", flag, n, t.Name))
		}
	}
	res.Observed[t.Name] = true
	if len(names) > 1 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s matches %d nodes (%s): each counts as a node of the %s tier; if the tier is one node, narrow the selector (e.g. instance=%q)", flag, len(names), strings.Join(names, ", "), t.Name, firstInstance(cpu)))
	}
}

// onThisHost reports whether an instance (host:port) is this machine: a
// loopback address or its host name.
func onThisHost(instance string) bool {
	host, _, err := net.SplitHostPort(instance)
	if err != nil {
		host = instance
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	name, _ := os.Hostname()
	return host == "localhost" || host == name
}

func firstInstance(m model.Matrix) string {
	for _, s := range m {
		if v := s.Metric["instance"]; v != "" {
			return string(v)
		}
	}
	return "HOST:PORT"
}

// hint says what the server has instead, for a selector that matched
// nothing: the metric's existence and the values of its labels.
func (c *Client) hint(ctx context.Context, sel Selector, from, to time.Time) string {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	if sel.Metric != "" {
		vals, _, err := c.api.LabelValues(ctx, "__name__", []string{sel.Metric}, from.Add(-time.Hour), to)
		if err == nil && len(vals) == 0 {
			return fmt.Sprintf(" (it has no %s at all: is its exporter scraped?)", sel.Metric)
		}
	}
	var hints []string
	for _, mt := range sel.Matchers {
		match := []string{}
		if sel.Metric != "" {
			match = []string{sel.Metric}
		}
		vals, _, err := c.api.LabelValues(ctx, mt.Name, match, from.Add(-time.Hour), to)
		if err != nil {
			continue
		}
		var vs []string
		for i, v := range vals {
			if i == 8 {
				vs = append(vs, "...")
				break
			}
			vs = append(vs, fmt.Sprintf("%q", string(v)))
		}
		if len(vs) == 0 {
			hints = append(hints, fmt.Sprintf("no series has a label %s", mt.Name))
		} else {
			hints = append(hints, fmt.Sprintf("%s is one of %s", mt.Name, strings.Join(vs, ", ")))
		}
	}
	if len(hints) == 0 {
		return ""
	}
	return " (there, " + strings.Join(hints, "; ") + ")"
}

func (c *Client) fetchExporter(ctx context.Context, t *Tier, from, to time.Time, step time.Duration, res *Result) {
	flag := fmt.Sprintf("--observe %s.exporter=%s", t.Name, t.Given[t.Name+".exporter"])
	sel := *t.Exporter
	names := exporterSeries
	if sel.Metric != "" {
		names = []string{sel.Metric}
	}
	q := fmt.Sprintf("sum by (__name__) ({%s})", sel.Labels(`__name__=~"`+strings.Join(names, "|")+`"`))
	m, err := c.rangeQuery(ctx, q, from, to, step)
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %v", flag, err))
		return
	}
	if len(m) == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: Prometheus at %s has none of the exporters' figures (postgres_exporter's pg_stat_database_*, redis_exporter's, HAProxy's) with these labels over the run%s", flag, c.m.URL, c.hint(ctx, Selector{Matchers: sel.Matchers}, from, to)))
		return
	}
	for _, s := range m {
		x := telemetry.ExternalStat{Tier: t.Name, Name: "prom." + string(s.Metric[model.MetricNameLabel])}
		for _, p := range s.Values {
			x.Points = append(x.Points, telemetry.StatPoint{At: p.Timestamp.Time(), Value: float64(p.Value)})
		}
		res.Stats = append(res.Stats, x)
	}
	sort.Slice(res.Stats, func(i, j int) bool { return res.Stats[i].Name < res.Stats[j].Name })
	res.Observed[t.Name] = true
}

// WaitScraped waits until the server holds samples of every mapped CPU
// series from at or after end (its scrape has caught up with the run),
// for at most limit; say is told once after a few seconds.
func (c *Client) WaitScraped(ctx context.Context, end time.Time, limit time.Duration, say func(string)) {
	deadline := time.Now().Add(limit)
	told := false
	start := time.Now()
	for _, t := range c.m.Tiers {
		if t.CPU == nil {
			continue
		}
		q := "max(timestamp(" + t.CPU.Of(t.CPU.Metric) + "))"
		for time.Now().Before(deadline) && ctx.Err() == nil {
			ctx2, cancel := context.WithTimeout(ctx, queryTimeout)
			v, _, err := c.api.Query(ctx2, q, time.Now())
			cancel()
			vec, ok := v.(model.Vector)
			if err != nil || !ok || len(vec) == 0 || float64(vec[0].Value) >= float64(end.UnixNano())/1e9 {
				break
			}
			if !told && time.Since(start) > 3*time.Second {
				told = true
				say(fmt.Sprintf("waiting up to %s for Prometheus at %s to scrape the run's last seconds", limit, c.m.URL))
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}
