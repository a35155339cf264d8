package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine/postgres/pgtest"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// postgresRun starts a PostgreSQL server for t (pgtest, stopped when t
// ends) and returns the run flags that point a run at a fresh database
// on it, its password in a 0600 file.
func postgresRun(t *testing.T) []string {
	t.Helper()
	needPostgres(t)
	c, err := pgtest.Start(0, pgtest.FastSettings)
	if err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(c.Password()), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--engine", "postgres", "--target", c.NewDatabase(t), "--set", "postgres.password_file=" + pw}
}

// TestReportCompareSQLitePostgres compares a real ycsb B run on SQLite
// with one on PostgreSQL interrupted after a few seconds of its 20: the
// terminal's first 25 lines name each run with its status and measured
// time and hold the throughput and p99 of every operation and of the
// total with their change and verdict; what differs names the engines
// with short versions and no setting both runs left at its default; the
// page goes into the baseline's directory, and a second comparison does
// not write over it without --force (exit 2, the page unchanged).
func TestReportCompareSQLitePostgres(t *testing.T) {
	skipShort(t, "starts PostgreSQL and makes real runs")
	t.Parallel()
	pgFlags := postgresRun(t)
	root := t.TempDir()
	a, b := filepath.Join(root, "ycsb-sqlite"), filepath.Join(root, "ycsb-postgres")
	common := []string{"--set", "ycsb.workload=b", "--users", "2", "--progress", "off"}
	if code, out, errs := run(t, context.Background(), append([]string{"run", "ycsb", "--duration", "3s", "--out", a}, common...)...); code != 0 {
		t.Fatalf("sqlite run: exit %d\n%s\n%s", code, out, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // interrupt the run a second after its first measured interval
		for measuredRows(t, b) == 0 && ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(time.Second)
		cancel()
	}()
	args := append(append([]string{"run", "ycsb", "--duration", "20s", "--out", b}, common...), pgFlags...)
	if code, out, errs := run(t, ctx, args...); code != ExitInterrupted {
		t.Fatalf("postgres run: exit %d, want %d (interrupted)\n%s\n%s", code, ExitInterrupted, out, errs)
	}
	rb := resultstest.Read(t, b)
	if rb.Status != results.StatusInterrupted || rb.MeasuredS <= 0 || rb.MeasuredS >= 15 {
		t.Fatalf("postgres run: status %s, measured %.1f s", rb.Status, rb.MeasuredS)
	}

	code, out, errs := run(t, context.Background(), "report", a, b)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("report A B:\n%s", out)
	lines := strings.Split(out, "\n")
	first := strings.Join(lines[:min(25, len(lines))], "\n")
	if !strings.HasPrefix(lines[0], "baseline: "+a+": ok, measured ") {
		t.Errorf("the baseline's line: %q", lines[0])
	}
	wantState := "contender 1: " + b + ": interrupted (exit code 3), measured " + strings.TrimSuffix(strconv.FormatFloat(rb.MeasuredS, 'f', 1, 64), ".0") + " s of the 20 s configured"
	if lines[1] != wantState {
		t.Errorf("the contender's line: %q, want %q", lines[1], wantState)
	}
	if !strings.HasPrefix(lines[2], "contender 1 against the baseline, all operations: throughput ") {
		t.Errorf("no verdict on the total in line 3: %q", lines[2])
	}
	ra := resultstest.Read(t, a)
	for _, op := range []string{"read", "update", "total"} {
		for _, m := range []string{"ops/s", "p99 ms"} {
			// an operation too rare for a p99 in either run (fewer than
			// 100, as on a slow machine) has a dash and no verdict
			comparable := op == "total" || m == "ops/s" || (ra.Summary[op].P99Ms != nil && rb.Summary[op].P99Ms != nil)
			if !hasAnswerRow(first, op, m, comparable) {
				t.Errorf("the first 25 lines lack %s %s with both runs' figures, the change and a verdict:\n%s", op, m, first)
			}
		}
	}
	diffs := out[strings.Index(out, "differences"):strings.Index(out, "every figure:")]
	if !strings.Contains(diffs, "  engine: sqlite 3.") || !strings.Contains(diffs, " | PostgreSQL 1") || strings.Contains(diffs, "compiled by") {
		t.Errorf("the engines are not named with short versions:\n%s", diffs)
	}
	for _, l := range strings.Split(strings.TrimSpace(diffs), "\n")[1:] {
		if set := strings.SplitN(strings.TrimSpace(l), ": ", 2); len(set) == 2 && strings.Contains(set[0], ".") && allDefault(set[1]) {
			t.Errorf("a setting no run changed: %q", l)
		}
	}
	page := filepath.Join(a, "compare-ycsb-postgres.html")
	if !strings.Contains(out, "comparison: "+page) {
		t.Errorf("the page is not named beside the baseline: %s", out)
	}
	before, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}

	// the page exists: no overwrite without --force
	code, out, errs = run(t, context.Background(), "report", a, b)
	if code != ExitUsage || out != "" || !strings.Contains(errs, page+" already exists") || !strings.Contains(errs, "--force") {
		t.Errorf("second report: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if after, err := os.ReadFile(page); err != nil || string(after) != string(before) {
		t.Errorf("the page was changed without --force: %v", err)
	}
	if code, _, errs := run(t, context.Background(), "report", a, b, "--force"); code != 0 {
		t.Errorf("report --force: exit %d %s", code, errs)
	}
}

// hasAnswerRow reports whether text has the answer's row of op and
// metric: both runs' figures, a change in per cent and a verdict; or, not
// comparable, a dash for a verdict.
func hasAnswerRow(text, op, metric string, comparable bool) bool {
	for _, l := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.Join(strings.Fields(l), " "), op+" "+metric+" ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if !comparable {
			return len(f) == 3 && f[2] == "-" && (f[0] == "-" || f[1] == "-")
		}
		if len(f) == 4 && strings.HasSuffix(f[2], "%") && (f[3] == "better" || f[3] == "worse" || f[3] == "same") {
			return true
		}
	}
	return false
}

// allDefault reports whether every value of a difference's row ("5s
// (default) | (none)") is a default or missing.
func allDefault(values string) bool {
	for _, v := range strings.Split(values, " | ") {
		if v != "(none)" && !strings.HasSuffix(v, " (default)") {
			return false
		}
	}
	return true
}
