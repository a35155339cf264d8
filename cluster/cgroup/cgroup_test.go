package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fake is a cgroup hierarchy of plain directories and files in a
// temporary directory, and the mountinfo text that names it.
type fake struct {
	t    *testing.T
	root string
	mi   strings.Builder
	id   int
}

func newFake(t *testing.T) *fake {
	return &fake{t: t, root: filepath.Join(t.TempDir(), "sys fs"), id: 30}
}

// create detects the fake's hierarchies and creates the group at path
// with limits l in them, failing the test on an error.
func (f *fake) create(path string, l Limits) *Group {
	f.t.Helper()
	g, err := f.detect().Create(path, l)
	if err != nil {
		f.t.Fatal(err)
	}
	return g
}

// v1 mounts a v1 hierarchy with the controllers opts ("cpu,cpuacct").
func (f *fake) v1(dir, opts string) string {
	d := f.mkdir(dir)
	fmt.Fprintf(&f.mi, "%d 23 0:%d / %s rw,nosuid,nodev,noexec,relatime shared:%d - cgroup cgroup rw,%s\n", f.id, f.id, escape(d), f.id, opts)
	f.id++
	return d
}

// v2 mounts a cgroup2 hierarchy whose cgroup.controllers is controllers.
func (f *fake) v2(dir, controllers string) string {
	d := f.mkdir(dir)
	f.file(filepath.Join(d, "cgroup.controllers"), controllers+"\n")
	fmt.Fprintf(&f.mi, "%d 23 0:%d / %s rw,nosuid,nodev,noexec,relatime shared:%d - cgroup2 cgroup2 rw,nsdelegate\n", f.id, f.id, escape(d), f.id)
	f.id++
	return d
}

// hybrid is this kind of machine: v1 cpu, cpuacct (co-mounted or not),
// memory and cpuset, and a v2 mount with neither cpu nor memory.
func (f *fake) hybrid(coMounted bool) {
	fmt.Fprintf(&f.mi, "22 1 0:21 / /proc rw,nosuid - proc proc rw\n23 22 0:22 / %s rw - tmpfs tmpfs rw,mode=755\n", escape(f.root))
	if coMounted {
		f.v1("cpu,cpuacct", "cpu,cpuacct")
	} else {
		f.v1("cpu", "cpu")
		f.v1("cpuacct", "cpuacct")
	}
	f.v1("memory", "memory")
	cs := f.v1("cpuset", "cpuset")
	f.file(filepath.Join(cs, "cpuset.cpus"), "0-3\n")
	f.file(filepath.Join(cs, "cpuset.mems"), "0\n")
	f.v1("systemd", "name=systemd")
	f.v2("unified", "hugetlb")
}

func (f *fake) mkdir(dir string) string {
	d := filepath.Join(f.root, dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		f.t.Fatal(err)
	}
	return d
}

func (f *fake) file(path, text string) {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fake) detect() *System {
	f.t.Helper()
	s, err := detectFrom([]byte(f.mi.String()))
	if err != nil {
		f.t.Fatalf("detect: %v\nmountinfo:\n%s", err, f.mi.String())
	}
	return s
}

// escape writes a mount point as mountinfo does.
func escape(s string) string { return strings.ReplaceAll(s, " ", `\040`) }

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestDetect(t *testing.T) {
	t.Run("v1 cpu and cpuacct apart, v2 without cpu", func(t *testing.T) {
		f := newFake(t)
		f.hybrid(false)
		s := f.detect()
		if s.Version != 1 || s.roots["cpu"] != filepath.Join(f.root, "cpu") || s.roots["cpuacct"] != filepath.Join(f.root, "cpuacct") ||
			s.roots["memory"] != filepath.Join(f.root, "memory") || s.roots["cpuset"] != filepath.Join(f.root, "cpuset") {
			t.Errorf("got %+v", s)
		}
	})
	t.Run("v1 cpu,cpuacct co-mounted", func(t *testing.T) {
		f := newFake(t)
		f.hybrid(true)
		s := f.detect()
		if want := filepath.Join(f.root, "cpu,cpuacct"); s.Version != 1 || s.roots["cpu"] != want || s.roots["cpuacct"] != want {
			t.Errorf("got %+v", s)
		}
	})
	t.Run("v2 with cpu and memory", func(t *testing.T) {
		f := newFake(t)
		d := f.v2("cgroup", "cpuset cpu io memory hugetlb pids rdma misc")
		s := f.detect()
		if s.Version != 2 || s.roots[""] != d || len(s.roots) != 1 {
			t.Errorf("got %+v", s)
		}
	})
	t.Run("v2 preferred to v1", func(t *testing.T) {
		f := newFake(t)
		f.v1("cpu", "cpu,cpuacct")
		f.v1("memory", "memory")
		f.v2("unified", "cpu memory")
		if s := f.detect(); s.Version != 2 {
			t.Errorf("got %+v", s)
		}
	})
	for _, c := range []struct {
		name  string
		setup func(f *fake)
		want  []string
	}{
		{"v2 without cpu and memory, no v1", func(f *fake) { f.v2("cgroup", "pids io") },
			[]string{"sys fs/cgroup offers only pids io, not cpu and memory", "are not mounted", fixHint}},
		{"v2 with no controller", func(f *fake) { f.v2("cgroup", "") },
			[]string{"offers no controller", fixHint}},
		{"v1 without memory", func(f *fake) { f.v1("cpu", "cpu,cpuacct") },
			[]string{"the cgroup v1 controllers memory are not mounted", fixHint}},
		{"nothing mounted", func(f *fake) {}, []string{"no cgroup hierarchy is mounted", fixHint}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			c.setup(f)
			_, err := detectFrom([]byte(f.mi.String()))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if !strings.Contains(fixHint, "enable the cpu and memory controllers of cgroup v2, or mount the v1 cpu, cpuacct and memory controllers") {
		t.Errorf("hint %q", fixHint)
	}
}

func TestCreateV1(t *testing.T) {
	for _, co := range []bool{false, true} {
		t.Run(fmt.Sprintf("co-mounted %t", co), func(t *testing.T) {
			f := newFake(t)
			f.hybrid(co)
			g := f.create("scalelab/c1/node1", Limits{CPUs: 0.2, MemoryBytes: 64 << 20, CPUSet: "1"})
			cpu, acct := "cpu", "cpuacct"
			if co {
				cpu, acct = "cpu,cpuacct", "cpu,cpuacct"
			}
			leaf := func(c string) string { return filepath.Join(f.root, c, "scalelab", "c1", "node1") }
			for file, want := range map[string]string{
				filepath.Join(leaf(cpu), "cpu.cfs_quota_us"):           "20000",
				filepath.Join(leaf(cpu), "cpu.cfs_period_us"):          "100000",
				filepath.Join(leaf("memory"), "memory.limit_in_bytes"): "67108864",
				// every new cpuset level has its parent's CPUs and memory nodes
				filepath.Join(f.root, "cpuset", "scalelab", "cpuset.cpus"):       "0-3",
				filepath.Join(f.root, "cpuset", "scalelab", "cpuset.mems"):       "0",
				filepath.Join(f.root, "cpuset", "scalelab", "c1", "cpuset.mems"): "0",
				filepath.Join(leaf("cpuset"), "cpuset.mems"):                     "0",
				filepath.Join(leaf("cpuset"), "cpuset.cpus"):                     "1",
			} {
				if got := read(t, file); got != want {
					t.Errorf("%s = %q, want %q", file, got, want)
				}
			}
			if !exists(leaf(acct)) {
				t.Errorf("no cpuacct group %s", leaf(acct))
			}
			if l := g.Limits(); l != (Limits{CPUs: 0.2, MemoryBytes: 64 << 20, CPUSet: "1"}) {
				t.Errorf("limits read back %+v", l)
			}
			var joins string
			for _, c := range []string{cpu, acct, "memory", "cpuset"} {
				if j := "echo $$ > '" + leaf(c) + "/cgroup.procs' && "; !strings.Contains(joins, j) {
					joins += j
				}
			}
			want := []string{"/bin/sh", "-c", joins + `exec "$@"`, "sh", "postgres", "-D", "data dir"}
			if w := g.Wrap([]string{"postgres", "-D", "data dir"}); fmt.Sprintf("%q", w) != fmt.Sprintf("%q", want) {
				t.Errorf("wrap\n%q\nwant\n%q", w, want)
			}
		})
	}
}

func TestCreateV1Unpinned(t *testing.T) {
	f := newFake(t)
	f.hybrid(false)
	g := f.create("scalelab/c1/node1", Limits{CPUs: 1.5})
	if exists(filepath.Join(f.root, "cpuset", "scalelab")) {
		t.Error("a cpuset group without --cpuset")
	}
	if q, m := read(t, filepath.Join(g.dirs["cpu"], "cpu.cfs_quota_us")), read(t, filepath.Join(g.dirs["memory"], "memory.limit_in_bytes")); q != "150000" || m != "-1" {
		t.Errorf("quota %s, memory limit %s", q, m)
	}
	if l := g.Limits(); l != (Limits{CPUs: 1.5}) {
		t.Errorf("limits %+v", l)
	}
	if w := g.Wrap([]string{"x"}); strings.Contains(w[2], "cpuset") || strings.Count(w[2], "cgroup.procs") != 3 {
		t.Errorf("wrap %q", w)
	}
	if q := quotaUs(0.001); q != 1000 {
		t.Errorf("quota of 0.001 cores %d, want the kernel's smallest 1000", q)
	}
}

func TestCreateV2(t *testing.T) {
	f := newFake(t)
	root := f.v2("cgroup", "cpuset cpu io memory pids")
	sys := f.detect()
	g, err := sys.Create("scalelab/c1/node2", Limits{CPUs: 0.2, MemoryBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	leaf := filepath.Join(root, "scalelab", "c1", "node2")
	if v := read(t, filepath.Join(leaf, "cpu.max")); v != "20000 100000" {
		t.Errorf("cpu.max %q", v)
	}
	if v := read(t, filepath.Join(leaf, "memory.max")); v != "1073741824" {
		t.Errorf("memory.max %q", v)
	}
	for _, d := range []string{root, filepath.Join(root, "scalelab"), filepath.Join(root, "scalelab", "c1")} {
		if v := read(t, filepath.Join(d, "cgroup.subtree_control")); v != "+cpu +memory" {
			t.Errorf("%s subtree_control %q", d, v)
		}
	}
	if exists(filepath.Join(leaf, "cgroup.subtree_control")) || exists(filepath.Join(leaf, "cpuset.cpus")) {
		t.Error("the leaf got controllers for children, or a cpuset")
	}
	if l := g.Limits(); l != (Limits{CPUs: 0.2, MemoryBytes: 1 << 30}) {
		t.Errorf("limits %+v", l)
	}
	want := fmt.Sprintf("%q", []string{"/bin/sh", "-c", "echo $$ > '" + leaf + `/cgroup.procs' && exec "$@"`, "sh", "sleep", "1"})
	if w := fmt.Sprintf("%q", g.Wrap([]string{"sleep", "1"})); w != want {
		t.Errorf("wrap %s, want %s", w, want)
	}

	g, err = sys.Create("scalelab/c1/node3", Limits{CPUSet: "0-1"})
	if err != nil {
		t.Fatal(err)
	}
	leaf = filepath.Join(root, "scalelab", "c1", "node3")
	for file, want := range map[string]string{
		filepath.Join(root, "scalelab", "cgroup.subtree_control"): "+cpu +memory +cpuset",
		filepath.Join(leaf, "cpuset.cpus"):                        "0-1",
		filepath.Join(leaf, "cpu.max"):                            "max 100000",
		filepath.Join(leaf, "memory.max"):                         "max",
	} {
		if got := read(t, file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if l := g.Limits(); l != (Limits{CPUSet: "0-1"}) {
		t.Errorf("limits %+v", l)
	}
}

func TestCreateErrors(t *testing.T) {
	f := newFake(t)
	f.v1("cpu", "cpu,cpuacct")
	f.v1("memory", "memory")
	sys := f.detect()
	for _, p := range []string{"", "/scalelab/n1", "scalelab/../n1", "scalelab//n1", "scalelab/./n1", "it's/n1", "a\nb"} {
		if _, err := sys.Create(p, Limits{CPUs: 1}); err == nil || !strings.Contains(err.Error(), "bad path") {
			t.Errorf("path %q: %v", p, err)
		}
	}
	if _, err := sys.Create("scalelab/n1", Limits{CPUSet: "0"}); err == nil || !strings.Contains(err.Error(), "cpuset controller is not mounted") {
		t.Errorf("cpuset without a cpuset mount: %v", err)
	}
	if exists(filepath.Join(f.root, "cpu", "scalelab")) {
		t.Error("a failed Create left a group")
	}

	v2 := newFake(t)
	v2.v2("cgroup", "cpu memory")
	if _, err := v2.detect().Create("scalelab/n1", Limits{CPUSet: "0"}); err == nil || !strings.Contains(err.Error(), "offers no cpuset controller") {
		t.Errorf("cpuset without a v2 cpuset controller: %v", err)
	}

	ro := newFake(t)
	ro.v1("cpu", "cpu,cpuacct")
	fmt.Fprintf(&ro.mi, "99 23 0:99 / %s ro,nosuid - cgroup cgroup ro,memory\n", escape(ro.mkdir("memory")))
	if _, err := ro.detect().Create("scalelab/n1", Limits{CPUs: 1}); err == nil || !strings.Contains(err.Error(), "read-only: "+needRoot) {
		t.Errorf("read-only: %v", err)
	}
}

// TestCreateCleansUp makes a cpuset whose parent has no CPUs to copy:
// Create fails and removes every directory it made, not those it found.
func TestCreateCleansUp(t *testing.T) {
	f := newFake(t)
	f.hybrid(false)
	if err := os.Remove(filepath.Join(f.root, "cpuset", "cpuset.cpus")); err != nil {
		t.Fatal(err)
	}
	other := f.mkdir("memory/scalelab/other")
	_, err := f.detect().Create("scalelab/c1/node1", Limits{CPUs: 1, CPUSet: "0"})
	if err == nil || !strings.Contains(err.Error(), "cgroup scalelab/c1/node1: read "+filepath.Join(f.root, "cpuset", "cpuset.cpus")) {
		t.Fatalf("got %v", err)
	}
	for _, c := range []string{"cpu", "cpuacct", "cpuset"} {
		if exists(filepath.Join(f.root, c, "scalelab")) {
			t.Errorf("%s/scalelab left behind", c)
		}
	}
	if exists(filepath.Join(f.root, "memory", "scalelab", "c1")) || !exists(other) {
		t.Error("memory: the failed group left behind, or another group removed")
	}
}
