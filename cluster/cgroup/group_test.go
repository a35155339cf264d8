package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestPermission(t *testing.T) {
	for _, e := range []error{syscall.EACCES, syscall.EPERM, syscall.EROFS} {
		err := permission("scalelab/c/n", fmt.Errorf("create x: %w", &os.PathError{Op: "mkdir", Path: "x", Err: e}))
		if !strings.Contains(err.Error(), "cgroup scalelab/c/n: create x") || !strings.HasSuffix(err.Error(), needRoot) {
			t.Errorf("%v: %v", e, err)
		}
	}
	if err := permission("p", syscall.ENOSPC); strings.Contains(err.Error(), needRoot) {
		t.Errorf("ENOSPC blamed on rights: %v", err)
	}
	if !strings.Contains(needRoot, "root") || !strings.Contains(needRoot, "delegated") {
		t.Error(needRoot)
	}
}

func TestUsage(t *testing.T) {
	f := newFake(t)
	f.hybrid(false)
	g := f.create("scalelab/c1/node1", Limits{CPUs: 0.5})
	if _, err := g.Usage(); err == nil || !strings.Contains(err.Error(), "cgroup scalelab/c1/node1: read cpuacct.usage") {
		t.Errorf("no cpuacct.usage: %v", err)
	}
	f.file(filepath.Join(g.dirs["cpuacct"], "cpuacct.usage"), "2500000000\n")
	f.file(filepath.Join(g.dirs["memory"], "memory.usage_in_bytes"), "4096\n")
	f.file(filepath.Join(g.dirs["cpu"], "cpu.stat"), "nr_periods 30\nnr_throttled 12\nthrottled_time 900000000\nnr_bursts 0\n")
	if u, err := g.Usage(); err != nil || u != (Usage{CPUNanos: 2.5e9, MemoryBytes: 4096, Periods: 30, ThrottledPeriods: 12, ThrottledNanos: 9e8}) {
		t.Errorf("v1 usage %+v %v", u, err)
	}

	v2 := newFake(t)
	v2.v2("cgroup", "cpu memory")
	g = v2.create("scalelab/n", Limits{})
	v2.file(filepath.Join(g.dirs[""], "cpu.stat"), "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 10\nnr_throttled 4\nthrottled_usec 200\n")
	v2.file(filepath.Join(g.dirs[""], "memory.current"), "8192\n")
	if u, err := g.Usage(); err != nil || u != (Usage{CPUNanos: 1500000, MemoryBytes: 8192, Periods: 10, ThrottledPeriods: 4, ThrottledNanos: 200000}) {
		t.Errorf("v2 usage %+v %v", u, err)
	}
}

// TestRemove removes groups of empty directories: parents go when empty,
// a second Remove is no error, a group with a process in it is.
func TestRemove(t *testing.T) {
	f := newFake(t)
	f.hybrid(true)
	sys := f.detect()
	mk := func(path string, controllers ...string) *Group {
		g, err := sys.group(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(controllers) > 0 {
			dirs := map[string]string{}
			for _, c := range controllers {
				dirs[c] = g.dirs[c]
			}
			g.dirs = dirs
		}
		for _, d := range g.dirList() {
			f.mkdir(strings.TrimPrefix(d, f.root))
		}
		return g
	}
	g1, g2 := mk("scalelab/c1/n1"), mk("scalelab/c2/n1", "memory")
	if err := g1.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"cpu,cpuacct", "cpuset"} {
		if exists(filepath.Join(f.root, c, "scalelab")) {
			t.Errorf("%s/scalelab left behind", c)
		}
	}
	if exists(filepath.Join(f.root, "memory", "scalelab", "c1")) || !exists(g2.dirs["memory"]) {
		t.Error("memory: c1 left, or c2 removed")
	}
	if err := g1.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	f.file(filepath.Join(g2.dirs["memory"], "cgroup.procs"), "4242\n")
	if err := g2.Remove(); err == nil || !strings.Contains(err.Error(), "remove "+g2.dirs["memory"]+": processes [4242] still inside") {
		t.Errorf("busy group: %v", err)
	}
}

// TestWrapRuns runs a wrapped command in a fake hierarchy whose path has
// a space: the PID written to cgroup.procs is the one cmd runs as.
func TestWrapRuns(t *testing.T) {
	f := newFake(t)
	f.hybrid(false)
	g := f.create("scalelab/c 1/node1", Limits{CPUs: 1})
	w := g.Wrap([]string{"sh", "-c", `echo "$$ $1"`, "x", "it's"})
	out, err := exec.Command(w[0], w[1:]...).Output()
	if err != nil {
		t.Fatalf("%q: %v", w, err)
	}
	pid, arg, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if arg != "it's" {
		t.Errorf("argument %q", arg)
	}
	for _, d := range g.dirList() {
		if got := read(t, filepath.Join(d, "cgroup.procs")); got != pid {
			t.Errorf("%s/cgroup.procs %q, command ran as %s", d, got, pid)
		}
	}
	procs := filepath.Join(g.dirs["memory"], "cgroup.procs")
	if err := os.Remove(procs); err != nil {
		t.Fatal(err)
	}
	f.mkdir(strings.TrimPrefix(procs, f.root))
	if _, err := exec.Command(w[0], w[1:]...).Output(); err == nil {
		t.Error("the command ran though joining its group failed")
	}
}

func TestOpen(t *testing.T) {
	f := newFake(t)
	f.hybrid(false)
	sys := f.detect()
	if _, err := sys.Create("scalelab/c1/n1", Limits{MemoryBytes: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	g, err := sys.open("scalelab/c1/n1")
	if err != nil {
		t.Fatal(err)
	}
	if _, pinned := g.dirs["cpuset"]; pinned || g.Limits().MemoryBytes != 8<<20 {
		t.Errorf("opened %+v, limits %+v", g.dirs, g.Limits())
	}
	if _, err := sys.open("scalelab/c1/gone"); err == nil {
		t.Error("opened a group that does not exist")
	}
}
