package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestPartitionOpenSearchNode: a 3-node OpenSearch cluster with each node
// in its own network namespace and 1 ms links, the logs index at
// replicas=1; node3 is partitioned for 15 s during a logs run: the fault
// and its healing are recorded with the operations and errors around it
// and the time until the cluster is green again, and every acknowledged
// write is read back after healing. A second run restarts node2 (a real
// JVM stopped and started again inside its namespace): it rejoins, the
// cluster is green again, nothing acknowledged is lost. `cluster down`
// leaves no namespace behind.
func TestPartitionOpenSearchNode(t *testing.T) {
	needNetns(t, "OpenSearch", func() error { return search.Installed("opensearch") }, "make java")
	ctx := context.Background()
	st, out := upLoadedCluster(t, "opensearch", "osnet", "--nodes", "3", "--netns", "--link", "delay=1ms", "--timeout", "5m")
	if st.Net == nil || len(st.Net.Nodes) != 3 || !strings.HasPrefix(st.Nodes[2].Host, "10.231.") || !strings.Contains(out, "links: node1 delay=1ms") {
		t.Fatalf("network %+v, nodes %+v\n%s", st.Net, st.Nodes, out)
	}

	dir := filepath.Join(t.TempDir(), "partition")
	code, out, errs := run(t, ctx, "run", "logs", "--cluster", "osnet", "--duration", "24s", "--users", "8",
		"--set", "opensearch.replicas=1", "--set", "opensearch.shards=3", "--set", "logs.records=2000",
		"--fault", "partition:node3@4s+15s", "--out", dir, "--progress", "off")
	t.Logf("partition run: exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, errs, errorSamples(dir))
	}
	r := resultstest.Read(t, dir)
	if len(r.Faults) != 1 {
		t.Fatalf("faults %+v", r.Faults)
	}
	f := r.Faults[0]
	if f.Outcome != "done" || f.InjectedS == nil || f.EndedS == nil || *f.EndedS-*f.InjectedS < 14.9 || f.Before == nil || f.After == nil || f.Before.OK == 0 {
		t.Fatalf("partition fault %+v (before %+v, after %+v)", f, f.Before, f.After)
	}
	if rc := r.Recovery; rc == nil || rc.TimeToHealthyS == nil || rc.TimedOut || !strings.HasPrefix(rc.Health, "green, 3 of 3") {
		t.Errorf("recovery %+v", rc)
	}
	if a := r.Audit; a == nil || !a.Checked || a.Lost != 0 || a.Acknowledged == 0 {
		t.Errorf("audit %+v", a)
	}
	if !eventsMention(r, "link down", "link up again") {
		t.Errorf("events %+v", r.Events)
	}

	// The second run works on an index of its own. Once, on the shared
	// index, its counts saw in their first seconds (before its own
	// fault) a record that neither it nor its load wrote: most likely a
	// write of the partition run that the cluster executed after that
	// run had ended and the index had been loaded again.
	dir = filepath.Join(t.TempDir(), "restart")
	code, out, errs = run(t, ctx, "run", "logs", "--cluster", "osnet", "--duration", "12s", "--users", "4",
		"--set", "opensearch.replicas=1", "--set", "opensearch.shards=3", "--set", "logs.records=2000",
		"--set", "opensearch.index_prefix=restart-",
		"--fault", "restart:node2@3s", "--out", dir, "--progress", "off")
	t.Logf("restart run: exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, errs, errorSamples(dir))
	}
	r = resultstest.Read(t, dir)
	if len(r.Faults) != 1 || r.Faults[0].Outcome != "done" {
		t.Fatalf("restart fault %+v", r.Faults)
	}
	if rc := r.Recovery; rc == nil || rc.TimeToHealthyS == nil || rc.TimedOut || !strings.HasPrefix(rc.Health, "green, 3 of 3") {
		t.Errorf("recovery after the restart %+v", rc)
	}
	if a := r.Audit; a == nil || !a.Checked || a.Lost != 0 || a.Acknowledged == 0 {
		t.Errorf("audit after the restart %+v", a)
	}
	after, err := cluster.Load("osnet")
	if err != nil {
		t.Fatal(err)
	}
	if after.Nodes[1].PID == st.Nodes[1].PID || !cluster.Alive(after.Nodes[1].PID) {
		t.Errorf("node2 pid %d before, %d after the restart", st.Nodes[1].PID, after.Nodes[1].PID)
	}
	downLeavesNoNamespace(t, ctx, st)
}

// TestCassandraNetns: a 2-node Cassandra ring with each node in its own
// namespace and 30 ms client links: the driver learns the ring's own
// addresses from the nodes and is sent to each node's proxy instead (a
// translation from the cluster's state), so every operation pays the
// link's delay both ways (p50 at least 60 ms); a ycsb run loses nothing.
func TestCassandraNetns(t *testing.T) {
	needNetns(t, "Cassandra", cassandra.Installed, "make java")
	ctx := context.Background()
	st, _ := upLoadedCluster(t, "cassandra", "csnet", "--nodes", "2", "--netns", "--link", "delay=30ms", "--timeout", "5m")
	for _, n := range st.Nodes {
		if !strings.HasPrefix(n.Host, "10.231.") || !strings.HasPrefix(n.Client, "127.0.0.1:") {
			t.Fatalf("node %+v: want its own network's address and a proxy on loopback", n)
		}
	}
	dir := filepath.Join(t.TempDir(), "ycsb")
	code, out, errs := run(t, ctx, "run", "ycsb", "--cluster", "csnet", "--duration", "4s", "--users", "4", "--out", dir, "--progress", "off")
	t.Logf("run: exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	r := resultstest.Read(t, dir)
	for op, s := range r.Summary {
		if s.Count > 0 && (s.P50Ms == nil || *s.P50Ms < 60) {
			t.Errorf("%s p50 %v ms: want at least 60 (30 ms each way through the node's proxy)", op, s.P50Ms)
		}
	}
	if a := r.Audit; a == nil || !a.Checked || a.Registers == nil || a.Registers.Lost != 0 || a.Registers.Acknowledged == 0 {
		t.Errorf("audit %+v", a)
	}
}
