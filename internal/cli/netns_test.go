package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/internal/testenv"
	"github.com/scalelab/scalelab/netns"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

// TestPartitionPostgresReplica: a PostgreSQL primary + replica started
// with --netns (each node in its own network namespace on a bridge), a
// logs run reading from the replica, the replica partitioned for 3 s: the
// run completes, the fault is recorded with its healing, the reads routed
// to the cut replica stall (throughput collapses after the cut), nothing
// acknowledged is lost, and `cluster down` leaves no namespace or bridge.
// A network left by a cluster that no longer exists is removed by the next
// cluster command.
func TestPartitionPostgresReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL in network namespaces")
	}
	if _, err := postgres.BinDir(); err != nil {
		testenv.Unavailable(t, "postgres", err, "apt-get install postgresql")
	}
	if err := netns.Check(); err != nil {
		testenv.Unavailable(t, "network namespaces", err, "run as root with iproute2 installed")
	}
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	// a stale network: its cluster is gone
	stale, err := netns.Create(filepath.Join(t.TempDir(), "gone"), []string{"node1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stale.Remove() })
	if code, out, errs := run(t, ctx, "cluster", "up", "postgres", "--name", "pgnet", "--replicas", "1", "--netns"); code != 0 {
		t.Fatalf("cluster up: %d %s %s", code, out, errs)
	} else if exec.Command("ip", "link", "show", stale.Bridge).Run() == nil || !strings.Contains(out, "network: each node in its own namespace") {
		t.Errorf("after cluster up, the stale network %s is still there, or the new cluster's is not named:\n%s\n%s", stale.Bridge, out, errs)
	}
	st, err := cluster.Load("pgnet")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run(t, context.Background(), "cluster", "down", "pgnet") })
	if st.Net == nil || len(st.Net.Nodes) != 2 || !strings.HasPrefix(st.Nodes[1].Host, "10.231.") || st.Nodes[0].Host == st.Nodes[1].Host {
		t.Fatalf("cluster network %+v, nodes %+v", st.Net, st.Nodes)
	}
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := run(t, ctx, "run", "logs", "--cluster", "pgnet", "--duration", "8s", "--users", "4", "--set", "logs.records=2000",
		"--set", "postgres.read_from=replicas", "--set", "postgres.ryw_window=0s",
		"--fault", "partition:node2@2s+3s", "--out", dir, "--progress", "off")
	t.Logf("run: exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	r := readRun(t, dir)
	if len(r.Faults) != 1 {
		t.Fatalf("faults %+v", r.Faults)
	}
	f := r.Faults[0]
	if f.Outcome != "done" || f.InjectedS == nil || f.EndedS == nil || *f.EndedS-*f.InjectedS < 2.9 || *f.EndedS-*f.InjectedS > 4 {
		t.Fatalf("partition fault %+v", f)
	}
	// every session soon waits on a read from the cut replica: the
	// intervals inside the cut see almost nothing done
	_, rows, err := report.ReadSeries(filepath.Join(dir, results.SeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	perT := map[float64]int64{}
	for _, rs := range rows {
		for _, row := range rs {
			perT[row.T] += row.Count
		}
	}
	var before, during []int64
	for ts, n := range perT {
		switch {
		case ts <= 2:
			before = append(before, n)
		case ts >= 3.5 && ts <= 5:
			during = append(during, n)
		}
	}
	var sumB, maxD int64
	for _, n := range before {
		sumB += n
	}
	for _, n := range during {
		maxD = max(maxD, n)
	}
	t.Logf("operations per 1 s interval: before the cut %v, inside it %v", before, during)
	// an interval with nothing done has no row in series.csv: 0
	if len(before) == 0 || maxD*10 > sumB/int64(len(before)) {
		t.Errorf("operations per interval: %v before the cut, %v inside it: want the reads to the cut replica to stall the sessions", before, during)
	}
	var down, up bool
	for _, e := range r.Events {
		down = down || strings.Contains(e.Detail, "link down")
		up = up || strings.Contains(e.Detail, "link up again")
	}
	if !down || !up {
		t.Errorf("events %+v", r.Events)
	}
	if a := r.Audit; a == nil || !a.Checked || a.Lost != 0 || a.Acknowledged == 0 {
		t.Errorf("audit %+v", a)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, results.FaultsLogFile)); !strings.Contains(string(b), "link down") {
		t.Errorf("faults.log lacks the partition:\n%s", b)
	}
	if code, _, errs := run(t, ctx, "cluster", "down", "pgnet"); code != 0 {
		t.Fatalf("cluster down: %s", errs)
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), st.Net.ID) {
		t.Errorf("namespaces left after down:\n%s", out)
	}
	if exec.Command("ip", "link", "show", st.Net.Bridge).Run() == nil {
		t.Errorf("bridge %s left after down", st.Net.Bridge)
	}
	// a partition needs a cluster of its own network
	if code, _, errs := run(t, ctx, "cluster", "up", "postgres", "--name", "pgloop"); code != 0 {
		t.Fatalf("cluster up: %s", errs)
	}
	t.Cleanup(func() { run(t, context.Background(), "cluster", "down", "pgloop") })
	if code, _, errs := run(t, ctx, "run", "logs", "--cluster", "pgloop", "--duration", "2s", "--fault", "partition:node1@1s+1s"); code != 2 || !strings.Contains(errs, "--netns") {
		t.Errorf("partition on a loopback cluster: exit %d, %s", code, errs)
	}
}
