package fault_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/internal/testenv"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestRedisRestartLosesWrites: a Redis server without persistence is
// restarted mid-run under ycsb workload A. It comes back empty: the
// updates it acknowledged before are gone, and the audit says so, naming
// them (exit 1); `scalelab audit DIR` afterwards finds the same losses
// (no later run overwrote them), exit 1.
func TestRedisRestartLosesWrites(t *testing.T) {
	t.Parallel()
	if _, err := redis.Binary(); err != nil {
		testenv.Unavailable(t, "redis", err, "make setup")
	}
	if code, out, errs := runCLI(t, "cluster", "up", "redis", "--name", "rlose"); code != 0 {
		t.Fatalf("cluster up redis: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { runCLI(t, "cluster", "down", "rlose") })
	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := runCLI(t, "run", "ycsb", "--cluster", "rlose", "--set", "ycsb.records=500", "--set", "ycsb.workload=a",
		"--users", "4", "--duration", "3s", "--fault", "restart:node1@1s", "--out", dir, "--progress", "off")
	r := resultstest.Read(t, dir)
	g := r.Audit.Registers
	if code != results.ExitCheckFailed || g == nil || !g.Checked || g.Lost == 0 || len(g.Examples) == 0 {
		t.Fatalf("run: exit %d, register audit %+v\n%s\n%s", code, g, stdout, stderr)
	}
	failure := strings.Join(r.Failures, "\n")
	if !strings.Contains(failure, "lost an acknowledged write") || !strings.Contains(failure, "register ") || !strings.Contains(stdout, "of 500 keys") && !strings.Contains(stdout, "keys), ") {
		t.Errorf("failures %q, output %s: want the lost registers named and keys counted as keys", failure, stdout)
	}
	t.Logf("run: %s", failure)
	code, stdout, stderr = runCLI(t, "audit", dir)
	if code != results.ExitCheckFailed || !strings.Contains(stdout, "lost") {
		t.Fatalf("scalelab audit: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if again := resultstest.Read(t, dir).Audit.Registers; again.Lost != g.Lost {
		t.Errorf("scalelab audit: %d lost, the run's own audit %d", again.Lost, g.Lost)
	}
}
