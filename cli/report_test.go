package cli

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestReportAfterKill9 builds the binary, kills a run with SIGKILL in the
// middle, and checks that `scalelab report DIR` rebuilds the part that ran:
// status incomplete, exit code 4 in run.json, a summary per operation
// matching series.csv's measured rows, and a report page.
func TestReportAfterKill9(t *testing.T) {
	skipShort(t, "builds the binary")
	t.Parallel()
	dir := killedMemoryRun(t, "--warmup", "1s", "--set", "memory.error_rate=0.02")
	if r := resultstest.Read(t, dir); r.Status != results.StatusRunning {
		t.Fatalf("after kill -9 run.json says %s, want running", r.Status)
	}

	code, out, stderr := run(t, context.Background(), "report", dir)
	if code != 0 || !strings.Contains(stderr, "rebuilt") || !strings.Contains(out, "status incomplete") {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, stderr)
	}
	r := resultstest.Read(t, dir)
	if r.Status != results.StatusIncomplete || r.ExitCode != ExitUnfinished || r.Error == "" || r.End == nil || r.MeasuredS < 2 {
		t.Fatalf("run.json: status %s exit %d measured %.1f error %q", r.Status, r.ExitCode, r.MeasuredS, r.Error)
	}
	counts := seriesCounts(t, dir)
	for _, op := range []string{"read", "update"} {
		s, ok := r.Summary[op]
		if !ok || s.Count == 0 || s.Count+s.Errors != s.Started || s.P99Ms == nil {
			t.Fatalf("%s: %+v", op, s)
		}
		if s.Count != counts[op][0] || s.Errors != counts[op][1] {
			t.Errorf("%s: rebuilt count %d errors %d, series.csv's measured rows say %d %d", op, s.Count, s.Errors, counts[op][0], counts[op][1])
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if err != nil || !strings.Contains(string(page), "incomplete") || !strings.Contains(string(page), "read: latency over time") {
		t.Fatalf("report.html: %v", err)
	}
	// a second report rebuilds only the page
	if code, _, stderr := run(t, context.Background(), "report", dir); code != 0 || strings.Contains(stderr, "rebuilt") {
		t.Fatalf("second report: exit %d %s", code, stderr)
	}
}

// measuredRows counts series.csv's whole rows outside the warm-up (its
// column warmup is the 13th; columns may follow it).
func measuredRows(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, results.SeriesFile))
	if err != nil {
		return 0
	}
	n := 0
	lines := strings.SplitAfter(string(b), "\n")
	for _, l := range lines[min(1, len(lines)):] { // past the header
		fields := strings.Split(strings.TrimSuffix(l, "\n"), ",")
		if strings.HasSuffix(l, "\n") && len(fields) > 12 && fields[12] == "false" {
			n++
		}
	}
	return n
}

// seriesCounts sums count and errors per operation over series.csv's
// measured rows.
func seriesCounts(t *testing.T, dir string) map[string][2]int64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, results.SeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][2]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		if len(fields) < 13 || fields[12] != "false" {
			continue
		}
		n, _ := strconv.ParseInt(fields[3], 10, 64)
		e, _ := strconv.ParseInt(fields[4], 10, 64)
		c := out[fields[2]]
		out[fields[2]] = [2]int64{c[0] + n, c[1] + e}
	}
	return out
}

func TestReportCommand(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		if code, out, errs := run(t, context.Background(), "run", "ycsb", "--engine", "null", "--ops", "3000", "--users", "2", "--out", d, "--progress", "off"); code != 0 {
			t.Fatalf("run: exit %d %s %s", code, out, errs)
		}
	}
	if code, out, errs := run(t, context.Background(), "report", a); code != 0 || !strings.Contains(out, "report: "+filepath.Join(a, "report.html")) {
		t.Fatalf("report one: exit %d %s %s", code, out, errs)
	}
	cmp := filepath.Join(root, "cmp.html")
	code, out, errs := run(t, context.Background(), "report", a, b, "--out", cmp)
	if code != 0 || !strings.Contains(out, "baseline: "+a) || !strings.Contains(out, "contender 1: "+b) {
		t.Fatalf("compare: exit %d %s %s", code, out, errs)
	}
	if fi, err := os.Stat(cmp); err != nil || fi.Size() < 1000 {
		t.Fatalf("compare page: %v", err)
	}
	bad := filepath.Join(root, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "run.json"), []byte("not json{"), 0o644); err != nil {
		t.Fatal(err)
	}
	k6, jm := filepath.Join(root, "k6"), filepath.Join(root, "jm")
	for file, body := range map[string]string{filepath.Join(k6, "run.json"): `{"tool":"k6"}`, filepath.Join(jm, "experiment.json"): `{"type":"jmeter"}`} {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(root, "missing", "dir", "x.html")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", bad}, filepath.Join(bad, "run.json") + " is not a valid run.json"},
		{[]string{"report", a, bad}, filepath.Join(bad, "run.json") + " is not a valid run.json"},
		{[]string{"check", bad}, filepath.Join(bad, "run.json") + " is not a valid run.json"},
		{[]string{"report", k6}, filepath.Join(k6, "run.json") + ` is not a scalelab results file (no "scalelab" version block)`},
		{[]string{"report", a, k6}, "is not a scalelab results file"},
		{[]string{"check", k6}, "is not a scalelab results file"},
		{[]string{"experiment", "show", jm}, filepath.Join(jm, "experiment.json") + ` is not a scalelab results file (no "scalelab" version block)`},
		{[]string{"report", jm}, "is not a scalelab results file"},
		{[]string{"report", a, b, "--out", missing}, "--out " + missing + ": directory " + filepath.Dir(missing) + " does not exist"},
		{[]string{"report", a, "--out", missing}, "does not exist"},
		{[]string{"report", a, b, "--out", root}, "is a directory"},
		{[]string{"report"}, "no results directory given"},
		{[]string{"report", filepath.Join(root, "none")}, "is not a directory"},
		{[]string{"report", root}, "no run.json"},
		{[]string{"report", a, root}, "not a results directory"},
		{[]string{"report", "--bogus", a}, "report: unknown flag --bogus; see 'scalelab report --help'"},
	} {
		code, out, errs := run(t, context.Background(), tc.args...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q lacks %q", tc.args, code, errs, tc.want)
		}
		if tc.args[0] != "check" && (out != "" || strings.Contains(errs, ".tmp")) {
			t.Errorf("%v: printed before the error: %q %q", tc.args, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(k6, "report.html")); !os.IsNotExist(err) {
		t.Errorf("report wrote a page into another tool's results: %v", err)
	}
	if code, out, _ := run(t, context.Background(), "help", "report"); code != 0 || !strings.Contains(out, "Usage: scalelab report") {
		t.Errorf("help report: exit %d %s", code, out)
	}
}
