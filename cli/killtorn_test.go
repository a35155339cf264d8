package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestReportAfterKill9TornLines: `scalelab run` is killed with SIGKILL in
// the middle of a run, as if in the middle of a write: its streamed files
// end with a partial line. `scalelab report DIR` still rebuilds the part
// that ran, status incomplete, ignoring the torn lines, with the counts of
// the whole lines only.
func TestReportAfterKill9TornLines(t *testing.T) {
	skipShort(t, "builds the binary")
	t.Parallel()
	dir := killedMemoryRun(t, "--set", "memory.error_rate=0.05")
	counts := seriesCounts(t, dir) // the whole lines, before the tear
	// A kill in the middle of a write leaves the start of a line.
	for file, torn := range map[string]string{
		results.SeriesFile: "41.000,1.000,read,977,4",
		results.HlogFile:   "Tag=read,41.000,1.000,0.52,HISTFAAAAC",
	} {
		f, err := os.OpenFile(filepath.Join(dir, file), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(torn); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}

	code, out, stderr := run(t, context.Background(), "report", dir)
	if code != 0 || !strings.Contains(stderr, "rebuilt") || !strings.Contains(out, "status incomplete") {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, stderr)
	}
	r := resultstest.Read(t, dir)
	if r.Status != results.StatusIncomplete || r.ExitCode != ExitUnfinished || !strings.Contains(r.Error, "torn") {
		t.Fatalf("run.json: status %s exit %d error %q", r.Status, r.ExitCode, r.Error)
	}
	for _, op := range []string{"read", "update"} {
		s := r.Summary[op]
		if s.Count == 0 || s.Count != counts[op][0] || s.Errors != counts[op][1] {
			t.Errorf("%s: rebuilt count %d errors %d, the whole lines of series.csv say %d %d", op, s.Count, s.Errors, counts[op][0], counts[op][1])
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if err != nil || !strings.Contains(string(page), "incomplete") || !strings.Contains(string(page), "torn") {
		t.Fatalf("report.html lacks the status or the torn-line note: %v", err)
	}
}
