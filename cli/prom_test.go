package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/promsource/promtest"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
	"github.com/scalelab/scalelab/runner"
)

// runOpts plans and executes a run from runner options (the flags'
// library form) and returns run.json and the terminal output.
func runOpts(t *testing.T, o *runner.Options) (*results.Run, string, error) {
	t.Helper()
	if o.Given == nil {
		o.Given = map[string]bool{}
	}
	if o.Users > 0 {
		o.Given["users"] = true
	}
	if o.Rate != "" {
		o.Given["rate"] = true
	}
	if o.Think != "" {
		o.Given["think"] = true
	}
	if o.Arrivals == "" {
		o.Arrivals = "constant" // the flags' defaults
	}
	if o.Drain == 0 {
		o.Drain = time.Second
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	p, err := runner.NewPlan(o)
	if err != nil {
		return nil, "", err
	}
	var out, errb bytes.Buffer
	doc, err := p.Execute(context.Background(), nil, &out, &errb)
	return doc, out.String() + errb.String(), err
}

// TestLiveFiguresInPrometheus: a real Prometheus scrapes a run's
// --metrics-listen endpoint every second and receives its --metrics-push
// (remote write); the operation count and the p99 it holds at the end
// equal run.json's.
func TestLiveFiguresInPrometheus(t *testing.T) {
	skipShort(t, "starts Prometheus")
	live := promtest.FreeAddr(t)
	prom := promtest.Prometheus(t, map[string][]string{"live": {live}})
	prom.WaitTarget(t, "live")
	dir := filepath.Join(t.TempDir(), "run")
	doc, out, err := runOpts(t, &runner.Options{Scenario: "ycsb", Engine: "null", Rate: "2000/s", Duration: 4 * time.Second,
		Out: dir, MetricsListen: live, MetricsPush: prom.URL + "/api/v1/write", Telemetry: -1})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if doc.Live == nil || doc.Live.Scrapes < 3 || doc.Live.Listen != live {
		t.Fatalf("live %+v, want at least 3 scrapes of %s\n%s", doc.Live, live, out)
	}
	ctx := context.Background()
	for _, job := range []string{"live", "scalelab"} { // scraped, pushed
		count, err := prom.Query(ctx, fmt.Sprintf(`sum(last_over_time(scalelab_operations_total{job=%q,scenario="ycsb",engine="null"}[1m]))`, job))
		if err != nil {
			t.Fatal(err)
		}
		if int64(count) != doc.Totals.Count {
			t.Errorf("job %s: Prometheus has %v operations, run.json %d", job, count, doc.Totals.Count)
		}
		p99, err := prom.Query(ctx, fmt.Sprintf(`last_over_time(scalelab_latency_quantile_seconds{job=%q,op="read",quantile="0.99"}[1m])`, job))
		if err != nil {
			t.Fatal(err)
		}
		want := *doc.Summary["read"].P99Ms / 1e3
		if math.Abs(p99-want) > 1e-9 {
			t.Errorf("job %s: Prometheus has p99 %v s for read, run.json %v s", job, p99, want)
		}
		t.Logf("job %s: %v operations, read p99 %.6f s (run.json %d, %.6f s)", job, count, p99, doc.Totals.Count, want)
	}
	// the histogram a dashboard reads agrees with the count
	n, err := prom.Query(ctx, `sum(last_over_time(scalelab_latency_seconds_count{job="live"}[1m]))`)
	if err != nil || int64(n) != doc.Totals.Count {
		t.Errorf("histogram count %v (%v), want %d", n, err, doc.Totals.Count)
	}
}

// TestPrometheusSourceBadInput: an unreachable server, a selector that
// matches nothing and one that matches two machines are warnings naming
// what is missing; the run still measures. Bad mappings are usage errors
// before anything runs.
func TestPrometheusSourceBadInput(t *testing.T) {
	skipShort(t, "starts Prometheus")
	n1, n2 := promtest.NodeExporter(t), promtest.NodeExporter(t)
	prom := promtest.Prometheus(t, map[string][]string{"node": {n1, n2}})
	prom.WaitUp(t, "node", 2)
	base := func(dir string) *runner.Options {
		return &runner.Options{Scenario: "ycsb", Engine: "null", Rate: "500/s", Duration: 3 * time.Second, Out: dir, Telemetry: 500 * time.Millisecond}
	}
	t.Run("unreachable", func(t *testing.T) {
		o := base(filepath.Join(t.TempDir(), "r"))
		o.TelemetrySource = "prometheus=http://" + promtest.FreeAddr(t)
		o.Observe = []string{`store=instance="db1:9100"`}
		doc, out, err := runOpts(t, o)
		if err != nil || doc.Totals.Count == 0 {
			t.Fatalf("run: %v\n%s", err, out)
		}
		if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "does not answer") || !strings.Contains(w, "not observed") {
			t.Errorf("warnings %q", w)
		}
		if !strings.Contains(out, "warning: --telemetry-source: prometheus at http://") {
			t.Errorf("terminal without the warning:\n%s", out)
		}
	})
	t.Run("nothing matches", func(t *testing.T) {
		o := base(filepath.Join(t.TempDir(), "r"))
		o.TelemetrySource = "prometheus=" + prom.URL
		o.Observe = []string{`store=job="nodes"`}
		doc, out, err := runOpts(t, o)
		if err != nil || doc.Totals.Count == 0 {
			t.Fatalf("run: %v\n%s", err, out)
		}
		w := strings.Join(doc.Warnings, "\n")
		if !strings.Contains(w, `--observe store=job="nodes": Prometheus at `+prom.URL+` has no series node_cpu_seconds_total{job="nodes",mode!~"idle|iowait|steal"} over the run (there, job is one of "node")`) {
			t.Errorf("warnings %q", w)
		}
	})
	t.Run("two nodes", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "r")
		o := base(dir)
		o.Duration = 5 * time.Second // a sample every two scrapes: two measured at least
		o.TelemetrySource = "prometheus=" + prom.URL
		o.Observe = []string{`store=job="node"`}
		doc, out, err := runOpts(t, o)
		if err != nil || doc.Totals.Count == 0 {
			t.Fatalf("run: %v\n%s", err, out)
		}
		if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "matches 2 nodes ("+n1) && !strings.Contains(w, "matches 2 nodes ("+n2) {
			t.Errorf("warnings %q", w)
		}
		var ext int
		for _, n := range doc.Telemetry.Nodes {
			if n.Source == "prometheus" && n.Tier == "store" {
				ext++
				if n.Limits == nil || n.Limits.CPUs < 1 || n.CPUMeanCores <= 0 || n.PeakRSSBytes <= 0 {
					t.Errorf("machine seen through node_exporter: %+v", n)
				}
			}
		}
		if ext != 2 {
			t.Errorf("%d store nodes from Prometheus, want 2: %+v", ext, doc.Telemetry.Nodes)
		}
		csv, _ := os.ReadFile(filepath.Join(dir, results.TelemetryFile))
		if !strings.Contains(string(csv), ",store,"+n1+",0,") {
			t.Errorf("telemetry.csv has no row of %s:\n%.500s", n1, csv)
		}
		if len(doc.Telemetry.Sources) != 1 || doc.Telemetry.Sources[0].Nodes != 2 {
			t.Errorf("sources %+v", doc.Telemetry.Sources)
		}
	})
	t.Run("usage", func(t *testing.T) {
		t.Setenv("SCALELAB_PROMETHEUS_TOKEN", "s3cret-token")
		for _, c := range []struct {
			source  string
			observe []string
			want    string
		}{
			{"prometheus=http://u:pw@127.0.0.1:9090", []string{`store=job="x"`}, "the URL holds credentials"},
			{"prom=http://127.0.0.1:9090", []string{`store=job="x"`}, "want prometheus=URL"},
			{"prometheus=http://127.0.0.1:9090", []string{`stor=job="x"`}, "did you mean store?"},
			{"prometheus=http://127.0.0.1:9090", []string{`store=job=x`}, "want a quoted value"},
			{"prometheus=http://127.0.0.1:9090", []string{`store.cpu=job="x"`, `store.cpuss=1`}, "did you mean cpus?"},
			{"prometheus=http://127.0.0.1:9090", nil, "no tier mapped"},
			{"", []string{`store=job="x"`}, "needs a Prometheus server"},
		} {
			o := base(filepath.Join(t.TempDir(), "never"))
			o.TelemetrySource, o.Observe = c.source, c.observe
			_, _, err := runOpts(t, o)
			var ee *results.ExitError
			if err == nil || !errors.As(err, &ee) || ee.Code != results.ExitUsage || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %v: %v, want exit 2 with %q", c.source, c.observe, err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") || strings.Contains(fmt.Sprint(err), ":pw@") {
				t.Errorf("error shows a secret: %v", err)
			}
			if _, serr := os.Stat(o.Out); serr == nil {
				t.Errorf("%v: results directory created", c.observe)
			}
		}
	})
}

// TestMonitoringFlags: the flags reach the run, and bad values are exit 2
// without a results directory.
func TestMonitoringFlags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--telemetry-source", "prometheus=http://127.0.0.1:9090", "--observe", "stor=job=\"x\""}, "did you mean store?"},
		{[]string{"--metrics-listen", "nowhere"}, "--metrics-listen \"nowhere\": want HOST:PORT"},
		{[]string{"--metrics-push", "ftp://x"}, "--metrics-push: want the http(s) URL"},
	} {
		code, _, errs := run(t, context.Background(), append([]string{"run", "ycsb", "--engine", "null", "--out", dir}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %s; want 2 and %q", c.args, code, errs, c.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: results directory created", c.args)
		}
	}
	code, out, errs := run(t, context.Background(), "run", "ycsb", "--engine", "null", "--duration", "2s", "--rate", "200/s", "--out", dir, "--progress", "off",
		"--metrics-listen", "127.0.0.1:0", "--telemetry-source", "prometheus=http://"+promtest.FreeAddr(t), "--observe", `store=job="db"`)
	if code != 0 || !strings.Contains(errs, "live figures at http://127.0.0.1:") || !strings.Contains(errs, "does not answer") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	if r := resultstest.Read(t, dir); r.Live == nil || r.Live.Listen == "" || len(r.Telemetry.Sources) != 1 {
		t.Errorf("live %+v, sources %+v", r.Live, r.Telemetry.Sources)
	}
	if code, out, _ := run(t, context.Background(), "help", "run"); code != 0 || !strings.Contains(out, "Monitoring:\n  --telemetry-source") {
		t.Errorf("help run:\n%s", out)
	}
}
