package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/netns"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/internal/testenv"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestPartitionPostgresReplica: a PostgreSQL primary + replica started
// with --netns (each node in its own network namespace on a bridge) and
// 1 ms links (a proxy on every path: the load generator to each node, the
// replica to the primary), a logs run reading from the replica, the
// replica partitioned for 15 s: the run completes, the fault is recorded
// with its healing, errors around it counted and the recovery time
// reported, the reads routed to the cut replica stall (throughput
// collapses after the cut), nothing acknowledged is lost, and `cluster
// down` leaves no namespace, bridge or proxy behind. A network left by a
// cluster that no longer exists is removed by the next cluster command.
func TestPartitionPostgresReplica(t *testing.T) {
	needNetns(t, "PostgreSQL", func() error { _, err := postgres.BinDir(); return err }, "apt-get install postgresql")
	ctx := context.Background()
	// a stale network: its cluster is gone
	stale, err := netns.Create(filepath.Join(t.TempDir(), "gone"), []string{"node1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stale.Remove() })
	if code, out, errs := run(t, ctx, "cluster", "up", "postgres", "--name", "pgnet", "--replicas", "1", "--netns", "--link", "delay=1ms"); code != 0 {
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
	// proxies: one per node for the load generator, one for replication
	if st.Links == nil || !st.Links.Proxied || len(st.Links.Proxies) != 3 || !strings.Contains(st.Target, "127.0.0.1:") || !strings.HasPrefix(st.Nodes[1].Client, "127.0.0.1:") {
		t.Fatalf("links %+v, target %s, nodes %+v", st.Links, st.Target, st.Nodes)
	}
	linksPID := st.Links.PID
	dir := filepath.Join(t.TempDir(), "run")
	// the cut comes 4 s in: on a busy machine the first second or two
	// may see only a few operations
	code, out, errs := run(t, ctx, "run", "logs", "--cluster", "pgnet", "--duration", "24s", "--users", "4", "--set", "logs.records=2000",
		"--set", "postgres.read_from=replicas", "--set", "postgres.ryw_window=0s",
		"--fault", "partition:node2@4s+15s", "--out", dir, "--progress", "off")
	t.Logf("run: exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	r := resultstest.Read(t, dir)
	if len(r.Faults) != 1 {
		t.Fatalf("faults %+v", r.Faults)
	}
	f := r.Faults[0]
	if f.Outcome != "done" || f.InjectedS == nil || f.EndedS == nil || *f.EndedS-*f.InjectedS < 14.9 || *f.EndedS-*f.InjectedS > 16 {
		t.Fatalf("partition fault %+v", f)
	}
	if f.Before == nil || f.After == nil || f.Before.OK == 0 {
		t.Errorf("operations and errors around the fault not counted: before %+v after %+v", f.Before, f.After)
	}
	if r.Recovery == nil || r.Recovery.TimeToHealthyS == nil {
		t.Errorf("no recovery time: %+v", r.Recovery)
	} else {
		t.Logf("recovery: healthy %.1f s after the partition healed; errors in the 10 s after the cut: %+v", *r.Recovery.TimeToHealthyS, f.After)
	}
	if r.Cluster == nil || r.Cluster.Params["links"] != "delay=1ms" {
		t.Errorf("run.json's cluster lacks its links: %+v", r.Cluster)
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
		case ts <= 4.5: // intervals end on the second, give or take a tick late
			before = append(before, n)
		case ts >= 5.5 && ts <= 18:
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
	if !eventsMention(r, "link down", "link up again") {
		t.Errorf("events %+v", r.Events)
	}
	if a := r.Audit; a == nil || !a.Checked || a.Lost != 0 || a.Acknowledged == 0 {
		t.Errorf("audit %+v", a)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, results.FaultsLogFile)); !strings.Contains(string(b), "link down") {
		t.Errorf("faults.log lacks the partition:\n%s", b)
	}
	downLeavesNoNamespace(t, ctx, st)
	if exec.Command("ip", "link", "show", st.Net.Bridge).Run() == nil {
		t.Errorf("bridge %s left after down", st.Net.Bridge)
	}
	if cluster.Alive(linksPID) {
		t.Errorf("the links' proxy server (pid %d) runs after down", linksPID)
	}
	// a partition needs a cluster of its own network
	upCluster(t, "postgres", "pgloop")
	if code, _, errs := run(t, ctx, "run", "logs", "--cluster", "pgloop", "--duration", "2s", "--fault", "partition:node1@1s+1s"); code != 2 || !strings.Contains(errs, "--netns") {
		t.Errorf("partition on a loopback cluster: exit %d, %s", code, errs)
	}
}

// quantiles of a window of a run.
type quantiles struct {
	p50, p99 float64 // ms
	n        int64
}

// windowQuantiles merges a tag's interval histograms of intervals.hlog
// that lie inside the windows (seconds since the first interval) and
// returns the merge's median and 99th percentile.
func windowQuantiles(t *testing.T, path, tag string, windows [][2]float64) quantiles {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	merged := hdr.New(1000, 3600e9, 3)
	base := -1.0
	for _, h := range resultstest.HlogIntervals(t, b) {
		start := float64(h.StartTimeMs()) / 1000
		if base < 0 {
			base = start
		}
		from, to := start-base, float64(h.EndTimeMs())/1000-base
		for _, w := range windows {
			if h.Tag() == tag && from >= w[0]-0.01 && to <= w[1]+0.01 {
				merged.Merge(h)
			}
		}
	}
	return quantiles{p50: float64(merged.ValueAtQuantile(50)) / 1e6, p99: float64(merged.ValueAtQuantile(99)) / 1e6, n: merged.TotalCount()}
}

// needNetns skips t in -short mode, marks it unavailable without the
// engine (check, fix) or without network namespaces and nftables, and gives
// it a SCALELAB_HOME of its own.
// downLeavesNoNamespace stops the cluster with `cluster down` and checks
// that none of its namespaces is left.
func downLeavesNoNamespace(t *testing.T, ctx context.Context, st *cluster.State) {
	t.Helper()
	if code, _, errs := run(t, ctx, "cluster", "down", st.Name); code != 0 {
		t.Fatalf("cluster down: %s", errs)
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), st.Net.ID) {
		t.Errorf("namespaces left after down:\n%s", out)
	}
}

func needNetns(t *testing.T, what string, check func() error, fix string) {
	t.Helper()
	skipShort(t, "starts "+what+" in network namespaces")
	if err := check(); err != nil {
		testenv.Unavailable(t, what, err, fix)
	}
	if err := netns.Check(); err != nil {
		testenv.Unavailable(t, "network namespaces", err, "run as root with iproute2 installed")
	}
	if err := netns.CheckNft(); err != nil {
		testenv.Unavailable(t, "nftables", err, "apt-get install nftables")
	}
	t.Setenv("SCALELAB_HOME", t.TempDir())
}

// TestNetworkFaultsPostgres: on a PostgreSQL primary + replica in
// namespaces with 1 ms links, a delay fault of 100 ms on the primary's
// link moves the p99 of the writes for its window only; a partition
// between the groups node1|node2 (each still reaching the load generator)
// and 30 % loss on the replica's link are injected and undone, recorded,
// and leave nothing behind; nothing acknowledged is lost.
func TestNetworkFaultsPostgres(t *testing.T) {
	needNetns(t, "PostgreSQL", func() error { _, err := postgres.BinDir(); return err }, "apt-get install postgresql")
	ctx := context.Background()
	if code, out, errs := run(t, ctx, "cluster", "up", "postgres", "--name", "pgfx", "--replicas", "1", "--netns", "--link", "delay=1ms", "--link", "node2:rate=100mbit"); code != 0 {
		t.Fatalf("cluster up: %d %s %s", code, out, errs)
	} else if !strings.Contains(out, "links: node1 delay=1ms; node2 delay=1ms,rate=100000kbit") {
		t.Errorf("cluster up does not show the links:\n%s", out)
	}
	t.Cleanup(func() { run(t, context.Background(), "cluster", "down", "pgfx") })
	st, err := cluster.Load("pgfx")
	if err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "delay")
	code, out, errs := run(t, ctx, "run", "logs", "--cluster", "pgfx", "--duration", "10s", "--users", "24", "--set", "logs.records=2000",
		"--set", "logs.mix=write:1", "--fault", "delay:node1=150ms@4s+3s", "--out", dir, "--progress", "off")
	t.Logf("delay run: exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	r := resultstest.Read(t, dir)
	if len(r.Faults) != 1 || r.Faults[0].Outcome != "done" || r.Faults[0].EndedS == nil {
		t.Fatalf("delay fault %+v", r.Faults)
	}
	// every write inside the window waits 150 ms each way (at least 300
	// ms); outside it the 1 ms links are back. The p99s are those of the
	// windows' merged interval histograms (a 1 s interval of a busy
	// machine may hold too few writes for one).
	hlog := filepath.Join(dir, results.HlogFile)
	in := windowQuantiles(t, hlog, "logs.write", [][2]float64{{4.5, 7}})
	outside := windowQuantiles(t, hlog, "logs.write", [][2]float64{{1.5, 3.5}, {8.5, 11}})
	t.Logf("writes inside the delay window: p50 %.1f ms, p99 %.1f ms (%d); outside: p50 %.1f ms, p99 %.1f ms (%d)",
		in.p50, in.p99, in.n, outside.p50, outside.p99, outside.n)
	if in.n < 100 || outside.n < 100 {
		t.Fatalf("too few writes for a p99: %d inside the window, %d outside", in.n, outside.n)
	}
	// The outside p99 is not compared: on a busy host a queue built in the
	// window drains after it, and the host's other work alone can put the
	// outside tail near 300 ms (CI once saw 372 ms outside, 357 inside).
	if in.p50 < 300 || in.p99 < 300 || outside.p50 >= 150 {
		t.Errorf("write latency inside the delay window p50 %.1f p99 %.1f ms, outside p50 %.1f p99 %.1f: want at least 300 inside and the median outside back near the 1 ms links'",
			in.p50, in.p99, outside.p50, outside.p99)
	}

	dir = filepath.Join(t.TempDir(), "groups")
	code, out, errs = run(t, ctx, "run", "logs", "--cluster", "pgfx", "--duration", "9s", "--users", "4", "--set", "logs.records=2000",
		"--fault", "partition:node1|node2@1s+3s,loss:node2=30%@5s+2s", "--out", dir, "--progress", "off")
	t.Logf("partition and loss run: exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	r = resultstest.Read(t, dir)
	if len(r.Faults) != 2 || r.Faults[0].Outcome != "done" || r.Faults[1].Outcome != "done" || r.Faults[0].Node != "node1|node2" {
		t.Fatalf("faults %+v", r.Faults)
	}
	var cut, joined, lossy bool
	for _, e := range r.Events {
		cut = cut || strings.Contains(e.Detail, "node1 cut from node2")
		joined = joined || strings.Contains(e.Detail, "groups joined again")
		lossy = lossy || strings.Contains(e.Detail, "30% of packets lost")
	}
	if !cut || !joined || !lossy {
		t.Errorf("events %+v", r.Events)
	}
	if a := r.Audit; a == nil || !a.Checked || a.Lost != 0 || a.Acknowledged == 0 {
		t.Errorf("audit %+v", a)
	}
	if st.Net.Separated("node1") || st.Net.Separated("node2") {
		t.Error("partition rules left after the run")
	}
	out2, _ := exec.Command("ip", "netns", "exec", st.Net.Nodes[1].Namespace, "nft", "list", "chain", "inet", "scalelab", "loss_out").Output()
	if strings.Contains(string(out2), "drop") {
		t.Errorf("loss rule left after the run:\n%s", out2)
	}
	// a delay fault on a cluster whose links do not delay is refused
	upCluster(t, "postgres", "pgnolink", "--netns")
	if code, _, errs := run(t, ctx, "run", "logs", "--cluster", "pgnolink", "--duration", "2s", "--fault", "delay:node1=10ms@1s+1s"); code != 2 || !strings.Contains(errs, "--link delay=0ms") {
		t.Errorf("delay on a cluster without proxies: exit %d, %s", code, errs)
	}
	if code, _, errs := run(t, ctx, "cluster", "up", "postgres", "--name", "pgbad", "--link", "delay=1ms"); code != 2 || !strings.Contains(errs, "--link needs --netns") {
		t.Errorf("--link without --netns: exit %d, %s", code, errs)
	}
	if code, _, errs := run(t, ctx, "cluster", "up", "postgres", "--name", "pgbad", "--netns", "--link", "delay=0.2ms"); code != 2 || !strings.Contains(errs, "whole milliseconds") {
		t.Errorf("--link delay=0.2ms: exit %d, %s", code, errs)
	}
}

// eventsMention reports whether, for each of words, one of r's events
// mentions it.
func eventsMention(r *results.Run, words ...string) bool {
	for _, w := range words {
		if !slices.ContainsFunc(r.Events, func(e results.Event) bool { return strings.Contains(e.Detail, w) }) {
			return false
		}
	}
	return true
}
