package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/setting"
)

// sleepProvisioner is a test provisioner for the memory engine whose nodes
// are sleep processes: it exercises the cluster commands without a store.
type sleepProvisioner struct{}

func (sleepProvisioner) Engine() string { return "memory" }

func (sleepProvisioner) Up(ctx context.Context, spec cluster.Spec, st *cluster.State) error {
	if spec.Options["fail"] == "yes" {
		pid, _ := cluster.Start([]string{"sleep", "60"}, st.Dir, filepath.Join(st.Dir, "n.log"), nil)
		st.Nodes = append(st.Nodes, cluster.Node{Name: "node1", PID: pid})
		return fmt.Errorf("injected failure")
	}
	n := max(spec.Nodes, 1)
	for i := 1; i <= n; i++ {
		pid, err := cluster.Start([]string{"sleep", "600"}, st.Dir, filepath.Join(st.Dir, fmt.Sprintf("node%d.log", i)), nil)
		if err != nil {
			return err
		}
		st.Nodes = append(st.Nodes, cluster.Node{Name: fmt.Sprintf("node%d", i), Role: "data", PID: pid, Host: "127.0.0.1", Port: 1000 + i})
	}
	st.Target, st.Auth = "memory://", "none (test)"
	return nil
}

func (sleepProvisioner) Status(ctx context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	var out []cluster.NodeStatus
	for _, n := range st.Nodes {
		out = append(out, cluster.NodeStatus{Node: n, Alive: cluster.Alive(n.PID)})
	}
	return out, nil
}

func (sleepProvisioner) Options() cluster.Options {
	return cluster.Options{Specs: []setting.Spec{cluster.NodesOption(1, 16, "sleep processes"),
		{Key: "fail", Kind: setting.Enum, Default: "no", Allowed: []string{"yes", "no"}, Description: "fail the start"}}}
}

func init() { cluster.Register(sleepProvisioner{}) }

func TestClusterCommands(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	if code, out, _ := run(t, ctx, "cluster", "list"); code != 0 || !strings.Contains(out, "no clusters") || !strings.Contains(out, "cluster up ENGINE") {
		t.Fatalf("list with none: %d %q", code, out)
	}
	code, out, errs := run(t, ctx, "cluster", "up", "memory", "--name", "m1", "--nodes", "3")
	if code != 0 || !strings.Contains(out, "cluster m1 (memory) is up") {
		t.Fatalf("up: %d %s %s", code, out, errs)
	}
	st, err := cluster.Load("m1")
	if err != nil || len(st.Nodes) != 3 || st.Params["up_seconds"] == "" {
		t.Fatalf("state %+v %v", st, err)
	}
	if code, _, errs := run(t, ctx, "cluster", "up", "memory", "--name", "m1"); code != ExitUsage || !strings.Contains(errs, "exists") {
		t.Fatalf("duplicate up: %d %s", code, errs)
	}
	code, out, _ = run(t, ctx, "cluster", "status", "m1")
	if code != 0 || strings.Count(out, "true") != 3 || !strings.Contains(out, "node3") {
		t.Fatalf("status: %s", out)
	}
	// run against it: --cluster resolves the engine's target.
	dir := filepath.Join(t.TempDir(), "r")
	if code, out, errs := run(t, ctx, "run", "ycsb", "--engine", "memory", "--cluster", "m1", "--ops", "100", "--out", dir, "--progress", "off"); code != 0 {
		t.Fatalf("run --cluster: %d %s %s", code, out, errs)
	}
	if r := readRun(t, dir); r.Cluster == nil || r.Cluster.Nodes != 3 {
		t.Fatalf("run.json cluster %+v", r.Cluster)
	}
	if code, _, errs := run(t, ctx, "run", "ycsb", "--engine", "sqlite", "--cluster", "m1", "--out", dir+"x"); code != ExitUsage || !strings.Contains(errs, "is a memory cluster") {
		t.Fatalf("engine mismatch: %d %s", code, errs)
	}
	// an app cluster's state naming m1 as its store (no processes: only
	// the dependency matters): down refuses, --force stops it with a warning
	app := &cluster.State{Name: "webdep", Engine: apptier.Name, Dir: cluster.Dir("webdep"), Params: map[string]string{apptier.ParamStore: "m1"}}
	if err := os.MkdirAll(app.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := app.Save(); err != nil {
		t.Fatal(err)
	}
	code, out, errs = run(t, ctx, "cluster", "down", "m1")
	if code != ExitUsage || !strings.Contains(errs, "cluster m1 is used by app cluster webdep (its store)") || !strings.Contains(errs, "--force") {
		t.Fatalf("down under an app cluster: %d %s %s", code, out, errs)
	}
	code, out, _ = run(t, ctx, "cluster", "down", "m1", "--force")
	if code != 0 || !strings.Contains(out, "stopped and removed") || !strings.Contains(out, "warning: app cluster webdep (its store) uses cluster m1") {
		t.Fatalf("down --force: %s", out)
	}
	if err := os.RemoveAll(app.Dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range st.Nodes {
		if cluster.Alive(n.PID) {
			t.Fatalf("node %s (pid %d) survived cluster down", n.Name, n.PID)
		}
	}
	if code, _, _ := run(t, ctx, "cluster", "status", "m1"); code != ExitUsage {
		t.Fatal("status of a removed cluster must fail")
	}
	// A failed up stops what it started and leaves no state behind.
	code, _, errs = run(t, ctx, "cluster", "up", "memory", "--name", "m2", "--opt", "fail=yes")
	if code != ExitUnfinished || !strings.Contains(errs, "injected failure") {
		t.Fatalf("failing up: %d %s", code, errs)
	}
	if _, err := cluster.Load("m2"); err == nil {
		t.Fatal("state of a failed up remains")
	}
	for _, bad := range [][]string{{"cluster", "up", "sqlite", "--name", "x"}, {"cluster", "up", "memory"}, {"cluster", "up", "memory", "--name", "../x"}, {"cluster", "frob"}} {
		if code, _, _ := run(t, ctx, bad...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}
