package fault_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// startRing starts a 3-node ring for t as cassandratest.Start does, but
// tries twice: on a 2-core machine loaded by other JVM clusters a joining
// node sometimes gives up its first gossip round ("unable to gossip with
// any peers"), which is not what this test is about.
func startRing(t *testing.T) *cluster.State {
	t.Helper()
	cassandratest.Require(t)
	for try := 1; ; try++ {
		name := fmt.Sprintf("f%d-%d", os.Getpid(), try)
		st := &cluster.State{Name: name, Engine: cassandra.Name, Created: time.Now().UTC(), Dir: t.TempDir(), Params: map[string]string{}}
		spec := cluster.Spec{Engine: cassandra.Name, Name: name, Nodes: 3, Heap: cassandratest.Heap,
			Options: map[string]string{"exit_with_pid": strconv.Itoa(os.Getpid())}}
		ctx, cancel := context.WithTimeout(context.Background(), cassandratest.UpTimeout)
		err := (&cassandra.Provisioner{}).Up(ctx, spec, st)
		cancel()
		if err == nil {
			t.Cleanup(func() {
				if err := cassandratest.Stop(st); err != nil {
					t.Error(err)
				}
			})
			return st
		}
		if serr := cassandratest.Stop(st); serr != nil {
			t.Logf("stop the failed ring: %v", serr)
		}
		if try == 2 {
			t.Fatalf("start cassandra ring (twice): %v", err)
		}
		t.Logf("start cassandra ring failed, trying once more: %v", err)
	}
}

// TestKillCassandraNode: one node of a 3-node ring is killed mid-run with
// reads and writes at QUORUM (replication factor 3). The run finishes, the
// ring goes on serving at QUORUM after the kill (20 s of load after it: on
// a 2-core machine running other JVM clusters, the driver may take several
// seconds of timeouts to stop sending to the dead node), errors are counted by
// class around it, the ring is green again with 2 nodes up (UN) and the
// audit loses nothing.
func TestKillCassandraNode(t *testing.T) {
	t.Parallel()
	st := startRing(t)
	publish(t, st)
	_, r, dir := runInto(t, "run", "logs", "--engine", "cassandra", "--cluster", st.Name,
		"--duration", "24s", "--users", "4", "--set", "logs.records=2000",
		"--set", "cassandra.read_consistency=QUORUM", "--set", "cassandra.write_consistency=QUORUM",
		"--fault", "kill:node3@4s")
	f := doneFault(t, r)
	if after := okAfter(t, dir, f.AtS); f.Before.OK == 0 || after == 0 {
		t.Errorf("before %+v, %d operations succeeded after the kill: want operations on both sides (QUORUM holds with 2 of 3)", f.Before, after)
	}
	t.Logf("around the kill: before %+v, after %+v", f.Before, f.After)
	wantRecovered(t, r, "green, 2 of 3")
	wantNodeDown(t, r, "node3")
	checkAudit(t, r)
}

// okAfter counts the operations that succeeded in the intervals that
// started at or after t (series.csv: t_s is an interval's end).
func okAfter(t *testing.T, dir string, at float64) int {
	t.Helper()
	rows := resultstest.ReadCSV(t, filepath.Join(dir, results.SeriesFile))
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	n := 0
	for _, r := range rows[1:] {
		ts, _ := strconv.ParseFloat(r[col["t_s"]], 64)
		iv, _ := strconv.ParseFloat(r[col["interval_s"]], 64)
		c, _ := strconv.Atoi(r[col["count"]])
		if ts-iv >= at {
			n += c
		}
	}
	return n
}
