package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/clustertest"
	"github.com/scalelab/scalelab/results/resultstest"
)

func init() { cluster.Register(clustertest.SleepProvisioner{}) }

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
	if r := resultstest.Read(t, dir); r.Cluster == nil || r.Cluster.Nodes != 3 {
		t.Fatalf("run.json cluster %+v", r.Cluster)
	}
	if code, _, errs := run(t, ctx, "run", "ycsb", "--engine", "sqlite", "--cluster", "m1", "--out", dir+"x"); code != ExitUsage || !strings.Contains(errs, "is a memory cluster") {
		t.Fatalf("engine mismatch: %d %s", code, errs)
	}
	// an app cluster's state naming m1 as its store (no processes: only
	// the dependency matters): down refuses, --force stops it with a warning
	app := clustertest.Saved(t, &cluster.State{Name: "webdep", Engine: apptier.Name, Params: map[string]string{apptier.ParamStore: "m1"}})
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

// TestClusterUpNodeExitShowsLog starts a cluster whose last node writes
// a line to its log and exits while the start waits: the error names that
// node and quotes the end of its log (blank lines skipped), says the
// directory is gone instead of pointing at its logs, and exits 4, with
// nothing left behind.
func TestClusterUpNodeExitShowsLog(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SCALELAB_HOME", home)
	code, out, errs := run(t, context.Background(), "cluster", "up", "memory", "--name", "mx", "--nodes", "2", "--opt", "fail=exit", "--timeout", "1m")
	if code != ExitUnfinished {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitUnfinished, out, errs)
	}
	for _, want := range []string{"a node process exited (node2)", "removed the cluster's directory",
		"node2 (exited), the end of its log:\n", "  LOG: starting, step 12\n  " + clustertest.ExitLine} {
		if !strings.Contains(errs, want) {
			t.Errorf("error lacks %q:\n%s", want, errs)
		}
	}
	for _, stale := range []string{"scalelab cluster status", "see its log", "step 3\n", "node1 ("} {
		if strings.Contains(errs, stale) {
			t.Errorf("error holds %q:\n%s", stale, errs)
		}
	}
	if n := strings.Count(errs, "\n  LOG: starting"); n != cluster.FailedLogLines-1 {
		t.Errorf("%d log lines shown before the last, want %d:\n%s", n, cluster.FailedLogLines-1, errs)
	}
	if _, err := os.Stat(cluster.Dir("mx")); !os.IsNotExist(err) {
		t.Errorf("the failed cluster's directory remains (%v)", err)
	}
}

// A start the --timeout cuts short says so on the error's first line,
// before what the deadline broke, and leaves nothing behind.
func TestClusterUpTimeoutSaysSo(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	code, out, errs := run(t, context.Background(), "cluster", "up", "memory", "--name", "mt", "--opt", "fail=hang", "--timeout", "100ms")
	if code != ExitUnfinished {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitUnfinished, out, errs)
	}
	first := ""
	for _, l := range strings.Split(errs, "\n") {
		if strings.HasPrefix(l, "scalelab: ") {
			first = l
			break
		}
	}
	if want := "scalelab: cluster up mt: the cluster did not come up within --timeout 100ms: setup: signal: killed"; !strings.HasPrefix(first, want) {
		t.Errorf("first error line %q, want it to begin %q\n%s", first, want, errs)
	}
	if _, err := os.Stat(cluster.Dir("mt")); !os.IsNotExist(err) {
		t.Errorf("the failed cluster's directory remains (%v)", err)
	}
}

// Every provisioner's options show in `cluster up ENGINE --help`, `help
// cluster up ENGINE` and `list cluster ENGINE`, each with its default and
// what it allows; `list cluster` names every provisioner.
func TestClusterOptionsListed(t *testing.T) {
	ctx := context.Background()
	code, all, _ := run(t, ctx, "list", "cluster")
	if code != 0 || !strings.Contains(all, "CLUSTERS") {
		t.Fatalf("list cluster: exit %d\n%s", code, all)
	}
	for _, name := range cluster.Provisioners() {
		p, _ := cluster.Lookup(name)
		if !strings.Contains(all, "\n  "+name+"\n") {
			t.Errorf("list cluster lacks %s:\n%s", name, all)
		}
		for _, args := range [][]string{{"cluster", "up", name, "--help"}, {"help", "cluster", "up", name}, {"list", "cluster", name}} {
			code, out, errs := run(t, ctx, args...)
			if code != 0 || !strings.Contains(out, "Options of "+name+" clusters (--opt KEY=VALUE") {
				t.Errorf("%v: exit %d, no options of %s\n%s%s", args, code, name, out, errs)
				continue
			}
			o := p.Options()
			for _, k := range o.Keys() {
				sp, _ := o.Spec(k)
				if !strings.Contains(out, "\n  "+k+" ("+sp.Kind.String()+", default ") || !strings.Contains(out, sp.AllowedText()) {
					t.Errorf("%v: option %s (%s) missing:\n%s", args, k, sp.AllowedText(), out)
				}
			}
			if o.Free != nil && !strings.Contains(strings.Join(strings.Fields(out), " "), o.Free.What) {
				t.Errorf("%v: the free keys (%s) are not said:\n%s", args, o.Free.What, out)
			}
		}
	}
	if code, out, _ := run(t, ctx, "cluster", "up", "--help"); code != 0 || !strings.Contains(out, "'cluster up ENGINE --help' for their defaults") ||
		!strings.Contains(out, "options: evictions, max_connections, memory_mb") {
		t.Errorf("cluster up --help does not list each engine's options and say where their defaults are:\n%s", out)
	}
	if code, _, errs := run(t, ctx, "list", "cluster", "redsi"); code != ExitUsage || !strings.Contains(errs, `did you mean "redis"?`) {
		t.Errorf("list cluster redsi: exit %d %s", code, errs)
	}
}

// A wrong option key or value is refused before anything starts: exit 2,
// what was wrong, what is allowed, the nearest key, no cluster directory.
func TestClusterUpBadOptions(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SCALELAB_HOME", home)
	ctx := context.Background()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"memcached", "--opt", "memroy_mb=64"}, []string{`memcached clusters take no option "memroy_mb" (did you mean "memory_mb"?)`, "scalelab list cluster memcached"}},
		{[]string{"memcached", "--opt", "memory_mb=4"}, []string{`memory_mb="4": out of range; allowed: int in [8, 1048576]`}},
		{[]string{"memcached", "--opt", "evictions=maybe"}, []string{"allowed: on|off"}},
		{[]string{"memcached", "--replicas", "1"}, []string{`--replicas 1: memcached clusters take no option "replicas"`}},
		{[]string{"redis", "--nodes", "2"}, []string{`--nodes 2: nodes="2": out of range; allowed: int in [1, 1]`}},
		{[]string{"redis", "--opt", "maxmemory-policy=allkeys-lur"}, []string{`(did you mean "allkeys-lru"?)`}},
		{[]string{"redis", "--opt", "requirepass=x"}, []string{"scalelab sets requirepass itself"}},
		{[]string{"postgres", "--opt", "tsl=on"}, []string{`(did you mean "tls"?)`, "postgresql.conf settings"}},
		{[]string{"postgres", "--replicas", "9"}, []string{"allowed: int in [0, 8]"}},
		{[]string{"postgres", "--heap", "1g"}, []string{`postgres clusters take no option "heap"`}},
		{[]string{"cassandra", "--opt", "num_tokens=0"}, []string{"allowed: int in [1, 256]"}},
		{[]string{"opensearch", "--heap", "1gb"}, []string{`heap="1gb": give a size such as 512m or 1g`}},
		{[]string{"elasticsearch", "--roles", "data,data"}, []string{"at least one node must be cm"}},
		{[]string{"ferretdb", "--backend", "mysql"}, []string{"allowed: sqlite|postgres|postgresql"}},
		{[]string{"app", "--scenario", "records", "--opt", "balanse=leastconn"}, []string{`(did you mean "balance"?)`}},
	} {
		args := append([]string{"cluster", "up", c.args[0], "--name", "bad"}, c.args[1:]...)
		code, _, errs := run(t, ctx, args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2: %s", c.args, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: %q lacks %q", c.args, errs, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(home, "clusters")); !os.IsNotExist(err) {
		t.Errorf("a refused cluster up left %s behind (%v)", filepath.Join(home, "clusters"), err)
	}
}

// The cluster document lists every provisioner's options as they are
// declared (SCALELAB_UPDATE_DOCS=1 rewrites the list).
func TestClusterDocOptions(t *testing.T) {
	const file = "../docs/clusters.md"
	const begin, end = "<!-- cluster options: begin -->\n", "<!-- cluster options: end -->"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q section", file, begin, end)
	}
	var provs []cluster.Provisioner
	for _, name := range cluster.Provisioners() {
		p, _ := cluster.Lookup(name)
		if _, test := p.(clustertest.SleepProvisioner); !test {
			provs = append(provs, p)
		}
	}
	want := clusterOptionsMarkdown(provs)
	if got := doc[i+len(begin) : j]; got != want {
		if os.Getenv("SCALELAB_UPDATE_DOCS") != "" {
			if err := os.WriteFile(file, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s lists other cluster options than the provisioners declare; SCALELAB_UPDATE_DOCS=1 go test ./cli -run TestClusterDocOptions rewrites it. Want:\n%s", file, want)
	}
}
