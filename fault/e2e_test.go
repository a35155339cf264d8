package fault_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cli"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/postgres/pgtest"
	"github.com/scalelab/scalelab/internal/testenv"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// runCLI runs `scalelab ARGS...` in process.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	code := cli.Main(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestMain gives the test binary its own SCALELAB_HOME, where publish
// puts the clusters' states (tests with real clusters run in parallel).
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "scalelab-faulttest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("SCALELAB_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// publish makes st loadable by name (--cluster NAME) under SCALELAB_HOME;
// the state's own Dir (where a restart saves it) stays.
func publish(t *testing.T, st *cluster.State) {
	t.Helper()
	if err := os.MkdirAll(cluster.Dir(st.Name), 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cluster.Dir(st.Name), "cluster.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// sleepCluster is a "memory" cluster whose nodes are sleep processes: the
// fault machinery end to end without a store (no memory provisioner
// exists, so health is the processes' liveness).
func sleepCluster(t *testing.T, name string, n int) *cluster.State {
	t.Helper()
	dir := t.TempDir()
	st := &cluster.State{Name: name, Engine: "memory", Dir: dir, Target: "memory://", Auth: "none (test)"}
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("node%d", i)
		cmd := []string{"sleep", "600"}
		log := filepath.Join(dir, name+".log")
		pid, err := cluster.Start(cmd, dir, log, nil)
		if err != nil {
			t.Fatal(err)
		}
		st.Nodes = append(st.Nodes, cluster.Node{Name: name, PID: pid, Host: "127.0.0.1", DataDir: dir, LogFile: log, Cmd: cmd})
	}
	t.Cleanup(func() {
		// A restart saved the new PID in the state's own directory.
		if b, err := os.ReadFile(filepath.Join(dir, "cluster.json")); err == nil {
			_ = json.Unmarshal(b, st)
		}
		if err := cluster.StopAll(st, time.Second); err != nil {
			t.Error(err)
		}
	})
	publish(t, st)
	return st
}

// TestFaultUsageErrors: bad --fault input is exit 2 with a message saying
// what was wrong and what is allowed, before any results directory exists.
func TestFaultUsageErrors(t *testing.T) {
	t.Parallel()
	sleepCluster(t, "sleepers1", 3)
	base := []string{"run", "ycsb", "--engine", "memory", "--duration", "5s", "--progress", "off"}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--cluster", "sleepers1", "--fault", "kill:node9@1s"}, "its nodes: node1, node2, node3"},
		{[]string{"--cluster", "sleepers1", "--fault", "kill:node2@5s"}, "not before the end of the 5s run"},
		{[]string{"--cluster", "sleepers1", "--fault", "stop:node2@1s"}, "KIND:NODE@TIME[+DURATION]"},
		{[]string{"--cluster", "sleepers1", "--fault", "explode:node2@1s"}, `unknown kind "explode"`},
		{[]string{"--fault", "kill:node2@1s"}, "need a scalelab-managed cluster given with --cluster"},
		{[]string{"--cluster", "sleepers1", "--fault", "kill:node2@1s", "--recovery-wait", "-1s"}, "must not be negative"},
	} {
		out := filepath.Join(t.TempDir(), "r")
		code, _, stderr := runCLI(t, append(append(append([]string{}, base...), "--out", out), tc.args...)...)
		if code != results.ExitUsage || !strings.Contains(stderr, tc.says) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, stderr, tc.says)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: a results directory was created", tc.args)
		}
	}
}

// TestFaultsEndToEnd: kill, stop and restart faults combined in one run of
// `scalelab run`: the run finishes, run.json holds the faults with their
// times, the node events and the recovery, the terminal shows them and the
// report marks them on the time charts.
func TestFaultsEndToEnd(t *testing.T) {
	t.Parallel()
	st := sleepCluster(t, "sleepers2", 3)
	old3 := st.Nodes[2].PID
	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := runCLI(t, "run", "ycsb", "--engine", "memory", "--cluster", "sleepers2", "--duration", "4s",
		"--set", "memory.latency=1ms", "--set", "ycsb.records=100", "--out", dir, "--progress", "off",
		"--fault", "kill:node2@1s", "--fault", "stop:node1@1s+1s", "--fault", "restart:node3@2s")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := resultstest.Read(t, dir)
	if len(r.Faults) != 3 {
		t.Fatalf("faults %+v", r.Faults)
	}
	for i, want := range []struct {
		kind string
		at   float64
	}{{"kill", 1}, {"stop", 1}, {"restart", 2}} {
		f := r.Faults[i]
		if f.Kind != want.kind || f.Outcome != "done" || f.InjectedS == nil || *f.InjectedS < want.at || *f.InjectedS > want.at+1 {
			t.Errorf("fault %d: %+v (injected %v)", i, f, f.InjectedS)
		}
		if f.Before == nil || f.After == nil || f.After.OK == 0 {
			t.Errorf("fault %s: no operation counts around it: %+v %+v", f.Spec, f.Before, f.After)
		}
	}
	if f := r.Faults[1]; f.EndedS == nil || *f.EndedS-*f.InjectedS < 0.9 {
		t.Errorf("stop lifted at %v, injected at %v", f.EndedS, f.InjectedS)
	}
	if cluster.Alive(st.Nodes[1].PID) || cluster.Alive(old3) {
		t.Error("a killed or restarted node's process is still running")
	}
	seen := map[string]bool{}
	for _, e := range r.Events {
		seen[e.Kind+" "+e.Node] = true
	}
	for _, want := range []string{"fault node2", "node_down node2", "fault node1", "node_down node3", "node_up node3", "health "} {
		if !seen[want] {
			t.Errorf("no %q event in %+v", want, r.Events)
		}
	}
	wantRecovered(t, r, "green, 2 of 3")
	for _, want := range []string{"fault kill:node2@1s: done at", "node down node2", "healthy (green)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("terminal summary lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "faults: waiting up to 3m0s for cluster sleepers2") {
		t.Errorf("no wait progress on stderr:\n%s", stderr)
	}
	page, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">kill node2</text>", ">cont node1</text>", ">node3 started</text>", "<h3>Faults</h3>", "<h3>Cluster events</h3>", "restart:node3@2s"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// startPostgres starts a PostgreSQL cluster of a primary and replicas
// (pgtest's fast settings) named name, stopped when t ends, and publishes
// it for --cluster.
func startPostgres(t *testing.T, replicas int, name string) *cluster.State {
	t.Helper()
	c, err := pgtest.Start(replicas, pgtest.FastSettings)
	if errors.Is(err, postgres.ErrNoBinaries) {
		testenv.Unavailable(t, "postgres", err, "apt-get install -y postgresql")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	if name != "" {
		c.State.Name = name
	}
	publish(t, c.State)
	return c.State
}

// runInto runs `scalelab ARGS --out DIR --progress off` into a new
// directory, logs what it printed and returns its exit code, run.json and
// the directory.
func runInto(t *testing.T, args ...string) (int, *results.Run, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := runCLI(t, append(args, "--out", dir, "--progress", "off")...)
	t.Logf("scalelab run: exit %d\n%s\n%s", code, stdout, stderr)
	return code, resultstest.Read(t, dir), dir
}

// doneFault fails t unless the run r ended ok with its first fault done
// and the operations before and after it counted; it returns that fault.
func doneFault(t *testing.T, r *results.Run) results.Fault {
	t.Helper()
	if r.Status != results.StatusOK {
		t.Fatalf("run status %s, exit %d: %s %v", r.Status, r.ExitCode, r.Error, r.Failures)
	}
	if len(r.Faults) == 0 {
		t.Fatal("no fault in run.json")
	}
	f := r.Faults[0]
	if f.Outcome != "done" || f.Before == nil || f.After == nil {
		t.Fatalf("fault %+v", f)
	}
	return f
}

// wantRecovered fails t unless r's cluster became healthy again after
// its faults, within the bound, with a health that starts with health.
func wantRecovered(t *testing.T, r *results.Run, health string) {
	t.Helper()
	rc := r.Recovery
	if rc == nil || rc.TimeToHealthyS == nil || rc.TimedOut || !strings.HasPrefix(rc.Health, health) {
		t.Fatalf("recovery %+v", rc)
	}
}

// wantNodeDown fails t unless r has a node_down event of node.
func wantNodeDown(t *testing.T, r *results.Run, node string) {
	t.Helper()
	for _, e := range r.Events {
		if e.Kind == results.EventNodeDown && e.Node == node {
			return
		}
	}
	t.Errorf("no node_down event for %s in %+v", node, r.Events)
}
