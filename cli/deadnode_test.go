package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
)

// killNode ends a cluster node's process outside scalelab, as a user's
// kill does, and waits until it is gone.
func killNode(t *testing.T, n cluster.Node) {
	t.Helper()
	if err := syscall.Kill(n.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); cluster.Alive(n.PID); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("node %s (pid %d) still alive", n.Name, n.PID)
		}
	}
}

// upSleepCluster starts a memory cluster of sleep processes and brings it down
// when the test ends.
func upSleepCluster(t *testing.T, name string, nodes string) *cluster.State {
	t.Helper()
	ctx := context.Background()
	if code, out, errs := run(t, ctx, "cluster", "up", "memory", "--name", name, "--nodes", nodes); code != 0 {
		t.Fatalf("up %s: %d %s %s", name, code, out, errs)
	}
	t.Cleanup(func() { run(t, ctx, "cluster", "down", name, "--force") })
	st, err := cluster.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestRunDeadClusterNodes(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	st := upSleepCluster(t, "d1", "3")
	tmp := t.TempDir()

	// one dead node of three peers: the run goes on, with a warning
	killNode(t, st.Nodes[1])
	dir := filepath.Join(tmp, "one")
	code, out, errs := run(t, ctx, "run", "ycsb", "--cluster", "d1", "--ops", "100", "--out", dir, "--progress", "off")
	if code != 0 || !strings.Contains(errs, "warning: cluster d1: node2 (data, pid ") {
		t.Fatalf("one dead node: %d %s %s", code, out, errs)
	}

	// every node dead: refused before anything starts
	killNode(t, st.Nodes[0])
	killNode(t, st.Nodes[2])
	dir = filepath.Join(tmp, "all")
	code, _, errs = run(t, ctx, "run", "ycsb", "--cluster", "d1", "--ops", "100", "--out", dir, "--progress", "off")
	for _, want := range []string{"cluster d1: node1 (data, pid ", "node3 (data, pid ", "are not running", "scalelab cluster status d1", "scalelab cluster down d1 && scalelab cluster up memory --name d1"} {
		if code != ExitUnfinished || !strings.Contains(errs, want) {
			t.Fatalf("dead nodes: %d, want %q in %s", code, want, errs)
		}
	}
	if strings.Contains(errs, "the run ends after") {
		t.Fatalf("the run was announced: %s", errs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a results directory was made for a refused run: %v", err)
	}

	// the cache tier's cluster is checked as well
	c1 := upSleepCluster(t, "c1", "1")
	killNode(t, c1.Nodes[0])
	code, _, errs = run(t, ctx, "run", "ycsb", "--engine", "sqlite", "--cache-cluster", "c1", "--ops", "100", "--out", filepath.Join(tmp, "cache"), "--progress", "off")
	if code != ExitUnfinished || !strings.Contains(errs, "--cache-cluster: cluster c1: node1 (data, pid ") {
		t.Fatalf("dead cache node: %d %s", code, errs)
	}
}
