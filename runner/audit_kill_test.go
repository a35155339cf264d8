package runner

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

// auditHelperEnv makes the test binary run TestAuditKillHelper's run into
// the directory it names (a child process the test kills).
const auditHelperEnv = "SCALELAB_AUDIT_KILL_DIR"

// TestAuditKillHelper is the child process of TestAuditKill9: a long run
// that is killed with SIGKILL. It does nothing in a normal test run.
func TestAuditKillHelper(t *testing.T) {
	dir := os.Getenv(auditHelperEnv)
	if dir == "" {
		t.Skip("child process of TestAuditKill9")
	}
	p, err := NewPlan(&Options{Scenario: "ycsb", Engine: "memory", Duration: 2 * time.Minute, Seed: 1, Out: dir,
		Sets: []string{"ycsb.workload=d", "ycsb.records=100", "memory.latency=1ms"}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p.Execute(context.Background(), nil, &out, &out) //nolint:errcheck // killed long before it ends
}

// TestAuditKill9: scalelab is killed with SIGKILL mid-run; what history.log
// streamed until then is read (ignoring a torn last line), and `scalelab
// report DIR` (report.Rebuild) puts the audit's counts into the rebuilt
// run.json, marked not read back, with status incomplete.
func TestAuditKill9(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "killed")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAuditKillHelper$")
	cmd.Env = append(os.Environ(), auditHelperEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, results.HistoryFile)
	deadline := time.Now().Add(90 * time.Second)
	for {
		if h, err := audit.ReadFile(path); err == nil && h.Counts().OK >= 50 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the child logged fewer than 50 acknowledged writes in 90 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	h, err := audit.ReadFile(path)
	if err != nil {
		t.Fatalf("history after kill -9: %v", err)
	}
	streamed := h.Counts()
	// Let the streamed files age past Rebuild's check for a live writer.
	old := time.Now().Add(-time.Minute)
	for _, f := range []string{results.HlogFile, results.SeriesFile, results.HistoryFile} {
		_ = os.Chtimes(filepath.Join(dir, f), old, old)
	}
	r, rebuilt, err := report.Rebuild(dir)
	if err != nil || !rebuilt {
		t.Fatalf("rebuild: %v (rebuilt %v)", err, rebuilt)
	}
	a := r.Audit
	if r.Status != results.StatusIncomplete || a == nil || a.Checked || a.NotChecked == "" {
		t.Fatalf("status %s, audit %+v", r.Status, a)
	}
	if a.Acknowledged != streamed.OK || a.Attempted != streamed.Attempted || a.Unknown != streamed.Unknown+streamed.InFlight {
		t.Errorf("rebuilt audit %+v, history %+v", a, streamed)
	}
	if err := report.WriteHTML(filepath.Join(dir, results.ReportFile), r, dir); err != nil {
		t.Fatal(err)
	}
}
