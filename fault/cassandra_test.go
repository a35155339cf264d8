package fault_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	"github.com/scalelab/scalelab/results"
)

// TestKillCassandraNode: one node of a 3-node ring is killed mid-run with
// reads and writes at QUORUM (replication factor 3). The run finishes, the
// ring goes on serving at QUORUM after the kill, errors are counted by
// class around it, the ring is green again with 2 nodes up (UN) and the
// audit loses nothing.
func TestKillCassandraNode(t *testing.T) {
	t.Parallel()
	st := cassandratest.Start(t, cluster.Spec{Nodes: 3})
	publish(t, st)
	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := runCLI(t, "run", "logs", "--engine", "cassandra", "--cluster", st.Name,
		"--duration", "12s", "--users", "4", "--set", "logs.records=2000",
		"--set", "cassandra.read_consistency=QUORUM", "--set", "cassandra.write_consistency=QUORUM",
		"--fault", "kill:node3@4s", "--out", dir, "--progress", "off")
	t.Logf("scalelab run: exit %d\n%s\n%s", code, stdout, stderr)
	r := readRun(t, dir)
	if r.Status != results.StatusOK {
		t.Fatalf("run status %s, exit %d: %s %v", r.Status, r.ExitCode, r.Error, r.Failures)
	}
	f := r.Faults[0]
	if f.Outcome != "done" || f.Before == nil || f.After == nil {
		t.Fatalf("fault %+v", f)
	}
	if f.Before.OK == 0 || f.After.OK == 0 {
		t.Errorf("before %+v, after %+v: want operations on both sides (QUORUM holds with 2 of 3)", f.Before, f.After)
	}
	t.Logf("around the kill: before %+v, after %+v", f.Before, f.After)
	rc := r.Recovery
	if rc == nil || rc.TimeToHealthyS == nil || rc.TimedOut || !strings.HasPrefix(rc.Health, "green, 2 of 3") {
		t.Fatalf("recovery %+v", rc)
	}
	down := false
	for _, e := range r.Events {
		down = down || e.Kind == results.EventNodeDown && e.Node == "node3"
	}
	if !down {
		t.Errorf("no node_down event for node3 in %+v", r.Events)
	}
	checkAudit(t, r)
}
