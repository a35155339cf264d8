package report

import (
	"html"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestCompareAnswerFirst: the terminal comparison names each run with its
// status and measured time, then gives the answer (throughput and p99 per
// operation and in total, with change and verdict) before what differs
// and every figure; the total's throughput is the operations' sum and its
// p99 lies between theirs.
func TestCompareAnswerFirst(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	base, cont := filepath.Join(root, "base"), filepath.Join(root, "cut")
	synth{intervals: 6, ops: []string{"read", "update"}, perOp: 300}.write(t, base)
	synth{intervals: 6, ops: []string{"read", "update"}, perOp: 150}.write(t, cont)
	r := resultstest.Read(t, cont)
	end := r.Start.Add(4 * time.Second)
	r.Status, r.ExitCode, r.StopReason, r.End = results.StatusInterrupted, 3, "interrupted", &end
	r.Load.DurationS, r.MeasuredS = 20, 4
	resultstest.Write(t, cont, r)

	terminal, page, _ := compareBoth(t, root, base, cont)
	lines := strings.Split(terminal, "\n")
	if lines[0] != "baseline: "+base+": ok, measured 6 s" || lines[1] != "contender 1: "+cont+": interrupted (exit code 3), measured 4 s of the 20 s configured" {
		t.Errorf("the runs' lines:\n%s", strings.Join(lines[:2], "\n"))
	}
	if !strings.HasPrefix(lines[2], "contender 1 against the baseline, all operations: throughput -50.0% (worse), p99 ") {
		t.Errorf("the verdict line: %q", lines[2])
	}
	rows := answerLines(t, lines[:25])
	for _, op := range []string{"read", "update", "total"} {
		for _, m := range []string{"ops/s", "p99 ms"} {
			f, ok := rows[op+" "+m]
			if !ok {
				t.Fatalf("no %s %s row in the first 25 lines:\n%s", op, m, terminal)
			}
			want := "worse"
			if m == "ops/s" && f[3] != "-50.0%" {
				t.Errorf("%s %s: change %q, want -50.0%%", op, m, f[3])
			}
			if m == "p99 ms" {
				want = f[4] // the same distribution: any verdict, but one of the three
			}
			if f[4] != want || (f[4] != "better" && f[4] != "worse" && f[4] != "same") {
				t.Errorf("%s %s: verdict %q", op, m, f[4])
			}
		}
	}
	if rows["total ops/s"][1] != "600" || rows["total ops/s"][2] != "300" {
		t.Errorf("total throughput %q, want the operations' sum 600 and 300", rows["total ops/s"])
	}
	b := resultstest.Read(t, base)
	lo, hi := *b.Summary["read"].P99Ms, *b.Summary["update"].P99Ms
	if p, err := strconv.ParseFloat(rows["total p99 ms"][1], 64); err != nil || p < lo*0.99 || p > hi*1.01 {
		t.Errorf("total p99 %q not between the operations' %.2f and %.2f", rows["total p99 ms"][1], lo, hi)
	}
	iAns, iDiff, iAll := strings.Index(terminal, "total   p99 ms"), strings.Index(terminal, "differences"), strings.Index(terminal, "every figure:")
	if iAns < 0 || iDiff < iAns || iAll < iDiff {
		t.Errorf("not answer, differences, every figure in that order:\n%s", terminal)
	}
	// the page: the answer before the facts, the total row marked
	iSec, iTot, iFacts := strings.Index(page, `<section id="answer">`), strings.Index(page, `<tr class="total"><td>total</td>`), strings.Index(page, "<h2>The runs</h2>")
	if iSec < 0 || iTot < iSec || iFacts < iTot {
		t.Errorf("page order: answer %d, total row %d, facts %d", iSec, iTot, iFacts)
	}
	if !strings.Contains(html.UnescapeString(page), "Contender 1 against the baseline, all operations: throughput -50.0% (worse)") {
		t.Error("the page lacks the verdict on the total")
	}
}

// answerLines reads the answer table's rows from terminal lines: "op
// metric" to the row's fields (op, baseline, contender, change, verdict).
func answerLines(t *testing.T, lines []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 7 && f[1] == "p99" && f[2] == "ms" {
			out[f[0]+" p99 ms"] = []string{f[0], f[3], f[4], f[5], f[6]}
		} else if len(f) == 6 && f[1] == "ops/s" {
			out[f[0]+" ops/s"] = []string{f[0], f[2], f[3], f[4], f[5]}
		}
	}
	return out
}

// TestDifferencesSetDifferently: a setting only one run's engine has,
// left at its default, is no difference, nor one both runs left at their
// defaults; a setting a run changed is, its default named; the server's
// banner is shortened, and given in full on the page.
func TestDifferencesSetDifferently(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	base, cont := filepath.Join(root, "sqlite"), filepath.Join(root, "postgres")
	for _, d := range []string{base, cont} {
		synth{intervals: 3, ops: []string{"read"}, perOp: 200}.write(t, d)
	}
	banner := "PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit"
	r := resultstest.Read(t, base)
	r.Engine, r.Server = "sqlite", &results.Server{Version: "3.45.1"}
	r.Settings = map[string]string{"sqlite.busy_timeout": "5s", "sqlite.journal_mode": "wal", "ycsb.records": "5000", "ycsb.workload": "b", "ycsb.fields": "10", "cache.mode": "auto"}
	r.Changed = []string{"ycsb.records", "ycsb.workload"}
	resultstest.Write(t, base, r)
	r = resultstest.Read(t, cont)
	r.Engine, r.Server = "postgres", &results.Server{Version: banner}
	r.Settings = map[string]string{"postgres.pool_size": "16", "postgres.replicas": "", "ycsb.records": "1000", "ycsb.workload": "b", "ycsb.fields": "10", "cache.mode": "off"}
	r.Changed = []string{"ycsb.workload", "postgres.pool_size"}
	r.Tiers = []results.Tier{{Role: "cache", Engine: "redis", Settings: map[string]string{"redis.db": "0", "redis.pool_size": "64"}, Changed: []string{"redis.pool_size"}}}
	resultstest.Write(t, cont, r)

	terminal, page, _ := compareBoth(t, root, base, cont)
	var diffs []string
	in := false
	for _, l := range strings.Split(terminal, "\n") {
		switch {
		case strings.HasPrefix(l, "differences"):
			in = true
		case in && strings.HasPrefix(l, "  "):
			diffs = append(diffs, strings.TrimSpace(l))
		case in:
			in = false
		}
	}
	want := []string{"engine: sqlite 3.45.1 | PostgreSQL 15.18", "tier cache: (none) | redis", "cache: redis.pool_size: (none) | 64",
		"postgres.pool_size: (none) | 16", "ycsb.records: 5000 | 1000 (default)"}
	if strings.Join(diffs, "\n") != strings.Join(want, "\n") {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(diffs, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(page, "<details><summary>Server versions in full</summary>") || !strings.Contains(html.UnescapeString(page), banner) {
		t.Error("the page does not give the server's banner in full")
	}
	if strings.Contains(html.UnescapeString(page), "sqlite.busy_timeout") || strings.Contains(html.UnescapeString(page), "cache.mode") {
		t.Error("the page lists a setting left at its default")
	}
}

// TestRunPageHeadlineFirst: a run's page gives its headline figures
// (throughput, p50 and p99 per operation, errors) before its facts, and
// speaks of HTTP answers only for a run that has HTTP figures.
func TestRunPageHeadlineFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, _ := synth{intervals: 4, ops: []string{"read", "update"}, perOp: 200, errEvery: 40}.write(t, dir)
	f := func(v float64) *float64 { return &v }
	r.Transactions = &results.Transactions{PerSecond: []results.TxSecond{{T: 1, N: 2, MeanMs: f(10)}, {T: 2, N: 3, MeanMs: f(12)}}}
	page := renderPage(t, r, dir)
	iHead, iRow, iFacts := strings.Index(page, `<section id="headline">`), strings.Index(page, "<td>update</td><td>195</td>"), strings.Index(page, `<dl class="facts">`)
	if iHead < 0 || iRow < iHead || iFacts < iRow {
		t.Errorf("headline %d, update's row %d, facts %d: the headline must come first", iHead, iRow, iFacts)
	}
	for _, w := range []string{"<th>p50 ms</th><th>p99 ms</th><th>errors</th>", "operations/s", "errors</span>"} {
		if !strings.Contains(page[iHead:iFacts], w) {
			t.Errorf("the headline lacks %q", w)
		}
	}
	if strings.Contains(page, "503 answered") || strings.Contains(page, "HTTP") {
		t.Error("a run without HTTP figures speaks of HTTP answers")
	}
	r.ScenarioReport = map[string]any{"http": map[string]any{"since": httpSinceLoad, "per_second": []any{map[string]any{"t": 1, "codes": map[string]any{"200": 2, "503": 1}}}}}
	if page = renderPage(t, r, dir); !strings.Contains(page, "an HTTP 503 answered at once counts") {
		t.Error("a web run's page does not say that a 503 answered at once counts")
	}
}

// TestRunStateMeasured: the measured time comes from the measured window,
// else from the load's start to the end, never from the configured
// duration.
func TestRunStateMeasured(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ls, end := start.Add(time.Second), start.Add(5500*time.Millisecond)
	r := &results.Run{Status: results.StatusFailed, ExitCode: 1, Start: start, LoadStart: &ls, End: &end,
		Load: results.Load{DurationS: 20, WarmupS: 0.5}, Summary: map[string]metrics.OpSummary{}}
	if s := runState(r); s != "failed (exit code 1), measured 4 s of the 20 s configured" {
		t.Errorf("runState %q", s)
	}
	r.Status, r.ExitCode, r.MeasuredS = results.StatusOK, 0, 19.9
	if s := runState(r); s != "ok, measured 19.9 s" {
		t.Errorf("runState %q", s)
	}
	if s := shortVersion("PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc"); s != "PostgreSQL 15.18" || shortVersion("3.45.1") != "3.45.1" {
		t.Errorf("shortVersion %q", s)
	}
}
