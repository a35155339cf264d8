package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestKill9DuringFaultThenAudit: `scalelab run` is killed with SIGKILL
// after a fault took a replica down; `scalelab report DIR` shows the fault
// and the node's death from faults.log, streamed as they happened, and
// `scalelab audit DIR` reopens the cluster from run.json and reads every
// write of history.log back: none lost, the writes in flight at the kill
// counted unknown.
func TestKill9DuringFaultThenAudit(t *testing.T) {
	skipShort(t, "builds the binary and starts PostgreSQL")
	needPostgres(t)
	home := t.TempDir()
	t.Setenv("SCALELAB_HOME", home)
	bin := buildBinary(t)
	ctx := context.Background()
	upCluster(t, "postgres", "pgcrash", "--replicas", "1")
	dir := filepath.Join(t.TempDir(), "r")
	cmd := exec.Command(bin, "run", "logs", "--cluster", "pgcrash", "--duration", "60s", "--users", "4", "--set", "logs.records=2000",
		"--fault", "kill:node2@1s", "--out", dir, "--progress", "off")
	cmd.Env = append(os.Environ(), "SCALELAB_HOME="+home)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// wait until the kill is in faults.log and the node's death seen
	killWhenReady(t, cmd, 90*time.Second, time.Second, func() error {
		b, _ := os.ReadFile(filepath.Join(dir, results.FaultsLogFile))
		if !strings.Contains(string(b), `"kind":"node_down"`) {
			return fmt.Errorf("no node_down in faults.log:\n%s", b)
		}
		return nil
	})

	code, out, errs := run(t, ctx, "report", dir)
	if code != 0 {
		t.Fatalf("report: %d %s %s", code, out, errs)
	}
	r := resultstest.Read(t, dir)
	if r.Status != results.StatusIncomplete || len(r.Faults) != 1 || r.Faults[0].Outcome != "done" || r.Faults[0].InjectedS == nil {
		t.Fatalf("rebuilt run: status %s, faults %+v", r.Status, r.Faults)
	}
	down := false
	for _, e := range r.Events {
		down = down || e.Kind == results.EventNodeDown && e.Node == "node2"
	}
	page, _ := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if !down || !strings.Contains(string(page), "kill:node2@1s") {
		t.Errorf("events %+v; report names the fault: %t", r.Events, strings.Contains(string(page), "kill:node2@1s"))
	}
	if r.Audit == nil || r.Audit.Checked {
		t.Fatalf("before the audit: %+v", r.Audit)
	}

	code, out, errs = run(t, ctx, "audit", dir)
	t.Logf("audit: exit %d\n%s\n%s", code, out, errs)
	if code != 0 {
		t.Fatalf("audit exit %d", code)
	}
	r = resultstest.Read(t, dir)
	a := r.Audit
	if a == nil || !a.Checked || a.Acknowledged == 0 || a.Lost != 0 || a.ReadBack != a.Attempted {
		t.Fatalf("audit %+v", a)
	}
	if !strings.Contains(out, "lost") {
		t.Errorf("audit summary on stdout:\n%s", out)
	}
	// bad usage says what is wrong
	if code, _, errs := run(t, ctx, "audit", t.TempDir()); code != 2 || !strings.Contains(errs, "not a results directory") {
		t.Errorf("audit of an empty directory: %d %s", code, errs)
	}
}
