package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

const (
	xss   = `</script><img src=x onerror=alert(1)>`
	xssOp = `</script><img/src=x/onerror=alert(2)>` // hlog tags cannot hold spaces
)

// TestRunPageEscapesEverything puts a script-injection string into every
// string a run document carries (store errors, settings, file contents)
// and checks that it only ever reaches the page escaped.
func TestRunPageEscapesEverything(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, _ := synth{intervals: 5, ops: []string{"read", xssOp}, perOp: 200, errEvery: 9, open: true}.write(t, dir)
	r.Error = "connect: " + xss
	r.Failures = []string{xss}
	r.Warnings = []string{"warn " + xss}
	r.Settings = map[string]string{"memory.error_message": xss, xss: "v"}
	r.Changed = []string{"memory.error_message", xss}
	r.Server = &results.Server{Version: xss, Target: xss, Extra: map[string]string{"error_message": xss}}
	r.Cluster = &results.ClusterRef{Name: xss, Nodes: 2, Params: map[string]string{"k": xss}}
	r.Command = []string{"scalelab", xss}
	r.Scenario, r.Engine = xss, xss
	r.Load.Params = map[string]any{"phases": xss}
	r.Host.CPUModel = xss
	r.ScenarioReport = map[string]any{"note": xss, "stale_reads": map[string]int64{xss: 3, "b": 1}, "fresh_reads": map[string]int64{xss: 7, "b": 0}}
	s := r.Summary["read"]
	s.ErrorsByClass[xss] = 1
	r.Summary["read"] = s
	page := renderPage(t, r, dir)
	for _, raw := range []string{"<img", "</script>", "<script"} {
		if i := strings.Index(page, raw); i >= 0 {
			t.Fatalf("unescaped markup %q in the page near: %s", raw, page[max(0, i-200):min(len(page), i+200)])
		}
	}
	if n := strings.Count(page, "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"); n < 15 {
		t.Errorf("the escaped string appears %d times, want it in every place it was put", n)
	}
	// every "<" of a string is escaped, so every tag is the page's own:
	// none may load anything
	if m := regexp.MustCompile(`<[^>]*\s(src|href|xlink:href|srcset|action)=|@import|url\(`).FindString(page); m != "" {
		t.Errorf("the page loads something: %q", m)
	}
}

// TestRunPageContents checks the sections and charts of a run page built
// from a synthetic open-model run.
func TestRunPageContents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		s     synth
		model string
		wants []string
		nots  []string
	}{
		{"open with errors", synth{intervals: 8, ops: []string{"read", "update"}, perOp: 300, errEvery: 13, open: true, warmup: 2}, "rate",
			[]string{"read: latency over time", "update: latency over time", "p99 service time", "Throughput over time", "Errors over time",
				"Latency by percentile", "read service time", "0.1 s", "1 s", "10 s", "warm-up", "Errors by class", "timeout", "svc p99"},
			[]string{"Concurrent sessions"}},
		{"closed without errors", synth{intervals: 4, ops: []string{"read"}, perOp: 150}, "closed",
			[]string{"read: latency over time", "No operation failed.", "Latency by percentile"},
			[]string{"service time", "Errors by class", "Errors over time"}},
		{"phases", synth{intervals: 6, ops: []string{"a"}, perOp: 150, open: true}, "phases",
			[]string{"Concurrent sessions over time", "sessions in progress"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r, _ := tc.s.write(t, dir)
			r.Load.Model = tc.model
			if tc.model == "phases" {
				r.MaxSessions = 16
			}
			page := renderPage(t, r, dir)
			for _, w := range tc.wants {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, n := range tc.nots {
				if strings.Contains(page, n) {
					t.Errorf("page has %q", n)
				}
			}
			// every chart drew a non-empty path
			for _, d := range regexp.MustCompile(`<path d="([^"]*)"`).FindAllStringSubmatch(page, -1) {
				if !strings.HasPrefix(d[1], "M") {
					t.Errorf("empty or malformed path %q", d[1])
				}
			}
			if strings.Count(page, "<svg viewBox") < 3 {
				t.Errorf("only %d charts", strings.Count(page, "<svg viewBox"))
			}
		})
	}
}

// TestRunPageWithoutStreamedFiles: a run that failed before measuring
// still gets a page, with notes instead of charts.
func TestRunPageWithoutStreamedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := &results.Run{Status: results.StatusFailed, ExitCode: 4, Error: "connect to sqlite: no such file", Scenario: "ycsb", Engine: "sqlite",
		Summary: map[string]metrics.OpSummary{}, Load: results.Load{Model: "closed"}}
	page := renderPage(t, r, dir)
	for _, w := range []string{"series.csv is missing", "intervals.hlog is missing", "connect to sqlite: no such file", "exit code 4"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}

// TestLongRunIsAggregated: a long run's lines are drawn from buckets of
// intervals, so the page stays small.
func TestLongRunIsAggregated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(metrics.SeriesHeader)
	for i := 1; i <= 1500; i++ {
		p99 := "2.5"
		if i == 700 {
			p99 = "950" // a spike must survive the bucketing
		}
		fmt.Fprintf(&b, "%d.000,1.000,read,100,1,100.0,1.2,%s,3.0,,0,0,false\n", i, p99)
	}
	if err := os.WriteFile(filepath.Join(dir, results.SeriesFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &results.Run{Status: results.StatusOK, Scenario: "s", Engine: "e", Load: results.Load{Model: "closed"}, Summary: map[string]metrics.OpSummary{}}
	page := renderPage(t, r, dir)
	if !strings.Contains(page, "Each point covers 3s of intervals") {
		t.Error("no aggregation note")
	}
	for _, d := range regexp.MustCompile(`<path d="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if n := strings.Count(d[1], "L") + strings.Count(d[1], "M"); n > maxPoints+10 {
			t.Errorf("a line of %d points", n)
		}
	}
	rows := bucketSeries(mustSeries(t, b.String()), 3)["read"]
	peak := 0.0
	for _, row := range rows {
		peak = math.Max(peak, row.P99)
	}
	if len(rows) != 500 || peak != 950 || rows[0].Count != 300 || rows[0].Tput != 100 || rows[0].P50 != 1.2 {
		t.Errorf("%d buckets, peak p99 %v, first %+v", len(rows), peak, rows[0])
	}
}

func mustSeries(t *testing.T, data string) *series {
	t.Helper()
	s, err := parseSeries([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLagOverTime: an open run's page charts the schedule lag of each
// interval from series.csv (a spike included); a closed run's has no lag
// chart.
func TestLagOverTime(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(metrics.SeriesHeader)
	for i := 1; i <= 20; i++ {
		lag := "0.050,0.400,1.000"
		if i == 12 {
			lag = "3.000,87.500,120.000"
		}
		for _, op := range []string{"read", "update"} {
			fmt.Fprintf(&b, "%d.000,1.000,%s,100,0,100.0,1.2,2.5,3.0,0.9,0,5000,false,%s\n", i, op, lag)
		}
	}
	for _, c := range []struct {
		model string
		open  bool
		want  bool
	}{{"phases", true, true}, {"closed", false, false}} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, results.SeriesFile), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		r := &results.Run{Status: results.StatusOK, Scenario: "s", Engine: "e", Load: results.Load{Model: c.model, Open: c.open}, Summary: map[string]metrics.OpSummary{}}
		v := buildRunView(r, dir)
		if (v.Lag != nil) != c.want {
			t.Errorf("%s: lag chart %v, want %v", c.model, v.Lag != nil, c.want)
		}
	}
	rows := mustSeries(t, b.String()).Rows["read"]
	if len(rows) != 20 || rows[11].LagP99 != 87.5 || rows[11].LagMax != 120 || rows[0].LagP50 != 0.05 {
		t.Errorf("lag columns read as %+v, %+v", rows[0], rows[11])
	}
	// A closed run's rows leave the lag columns empty: no chart.
	closed := strings.ReplaceAll(b.String(), ",0.050,0.400,1.000\n", ",,,\n")
	closed = strings.ReplaceAll(closed, ",3.000,87.500,120.000\n", ",,,\n")
	s := mustSeries(t, closed)
	if c := lagChart(s.Ops, s.Rows, timeline(s.Rows, 1), 0, ""); c != nil {
		t.Error("a lag chart drawn from empty lag columns")
	}
}
