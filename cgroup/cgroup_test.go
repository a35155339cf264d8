package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/internal/testenv"
)

// fakeV1 builds a v1 hierarchy in a temporary directory and its
// mountinfo; cpuCoMounted mounts cpu and cpuacct together.
func fakeV1(t *testing.T, cpuCoMounted bool) (string, []byte) {
	root := t.TempDir()
	var mi strings.Builder
	mount := func(id int, dir, opts string) {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&mi, "%d 1 0:%d / %s rw,relatime shared:1 - cgroup cgroup rw,%s\n", id, id, filepath.Join(root, dir), opts)
	}
	if cpuCoMounted {
		mount(30, "cpu,cpuacct", "cpu,cpuacct")
	} else {
		mount(30, "cpu", "cpu")
		mount(31, "cpuacct", "cpuacct")
	}
	mount(32, "memory", "memory")
	mount(33, "cpuset", "cpuset")
	for f, v := range map[string]string{"cpuset.cpus": "0-1", "cpuset.mems": "0"} {
		if err := os.WriteFile(filepath.Join(root, "cpuset", f), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintf(&mi, "40 1 0:40 / %s rw - cgroup2 cgroup2 rw\n", filepath.Join(root, "unified"))
	if err := os.MkdirAll(filepath.Join(root, "unified"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "unified", "cgroup.controllers"), []byte("hugetlb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, []byte(mi.String())
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestV1Create(t *testing.T) {
	for _, co := range []bool{false, true} {
		t.Run(fmt.Sprintf("cpu,cpuacct co-mounted %t", co), func(t *testing.T) {
			root, mi := fakeV1(t, co)
			sys, err := detectFrom(mi)
			if err != nil || sys.Version != 1 {
				t.Fatalf("detect: %v %+v", err, sys)
			}
			g, err := sys.Create("scalelab/c1/node1", Limits{CPUs: 0.2, MemoryBytes: 64 << 20, CPUSet: "1"})
			if err != nil {
				t.Fatal(err)
			}
			cpu := "cpu"
			if co {
				cpu = "cpu,cpuacct"
			}
			leaf := func(c string) string { return filepath.Join(root, c, "scalelab", "c1", "node1") }
			if q := read(t, filepath.Join(leaf(cpu), "cpu.cfs_quota_us")); q != "20000" {
				t.Errorf("quota %s, want 20000", q)
			}
			if p := read(t, filepath.Join(leaf(cpu), "cpu.cfs_period_us")); p != "100000" {
				t.Errorf("period %s", p)
			}
			if m := read(t, filepath.Join(leaf("memory"), "memory.limit_in_bytes")); m != "67108864" {
				t.Errorf("memory %s", m)
			}
			// every new cpuset level got the parent's CPUs and memory nodes first
			if c := read(t, filepath.Join(root, "cpuset", "scalelab", "cpuset.mems")); c != "0" {
				t.Errorf("intermediate cpuset.mems %q", c)
			}
			if c := read(t, filepath.Join(leaf("cpuset"), "cpuset.cpus")); c != "1" {
				t.Errorf("cpuset.cpus %q", c)
			}
			if l := g.Limits(); l.CPUs != 0.2 || l.MemoryBytes != 64<<20 || l.CPUSet != "1" {
				t.Errorf("limits read back %+v", l)
			}
			w := g.Wrap([]string{"postgres", "-D", "data dir"})
			if w[0] != "/bin/sh" || w[3] != "sh" || w[6] != "data dir" || !strings.Contains(w[2], "echo $$ > '"+leaf("memory")+"/cgroup.procs'") || !strings.HasSuffix(w[2], `exec "$@"`) {
				t.Errorf("wrap %q", w)
			}
		})
	}
}

func TestV2Create(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpuset cpu io memory pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mi := fmt.Sprintf("30 1 0:26 / %s rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n", root)
	sys, err := detectFrom([]byte(mi))
	if err != nil || sys.Version != 2 {
		t.Fatalf("detect: %v %+v", err, sys)
	}
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
	if l := g.Limits(); l.CPUs != 0.2 || l.MemoryBytes != 1<<30 {
		t.Errorf("limits %+v", l)
	}
	if err := os.WriteFile(filepath.Join(leaf, "cpu.stat"), []byte("usage_usec 1500\nnr_periods 10\nnr_throttled 4\nthrottled_usec 200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(leaf, "memory.current"), []byte("4096\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := g.Usage()
	if err != nil || u.CPUNanos != 1500000 || u.ThrottledPeriods != 4 || u.ThrottledNanos != 200000 || u.MemoryBytes != 4096 {
		t.Errorf("usage %+v %v", u, err)
	}
}

func TestDetectErrors(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("pids io\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mi := fmt.Sprintf("30 1 0:26 / %s rw - cgroup2 cgroup2 rw\n", root)
	_, err := detectFrom([]byte(mi))
	if err == nil || !strings.Contains(err.Error(), "without cpu or memory") || !strings.Contains(err.Error(), "run without --cpus") {
		t.Fatalf("v2 without controllers: %v", err)
	}
	if _, err := detectFrom(nil); err == nil || !strings.Contains(err.Error(), "no cgroup hierarchy is mounted") {
		t.Fatalf("nothing mounted: %v", err)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"512m", 512 << 20}, {"1g", 1 << 30}, {"1.5g", 3 << 29}, {"256MiB", 256 << 20}, {"1073741824", 1 << 30}, {"64M", 64 << 20}} {
		if got, err := ParseMemory(c.in); err != nil || got != c.want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "1k", "-1g", "lots", "0"} {
		if _, err := ParseMemory(bad); err == nil || !strings.Contains(err.Error(), "allowed") {
			t.Errorf("ParseMemory(%q): %v", bad, err)
		}
	}
	if v, err := ParseCPUs("0.5"); err != nil || v != 0.5 {
		t.Errorf("ParseCPUs: %v %v", v, err)
	}
	for _, bad := range []string{"0", "-1", "x", "2000"} {
		if _, err := ParseCPUs(bad); err == nil || !strings.Contains(err.Error(), "allowed") {
			t.Errorf("ParseCPUs(%q): %v", bad, err)
		}
	}
	if _, err := ParseCPUSet("0"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "a", "1-0", fmt.Sprint(runtime.NumCPU())} {
		if _, err := ParseCPUSet(bad); err == nil || !strings.Contains(err.Error(), "allowed") {
			t.Errorf("ParseCPUSet(%q): %v", bad, err)
		}
	}
	if s := (Limits{CPUs: 0.5, MemoryBytes: 1 << 30, CPUSet: "0"}).String(); s != "cpus 0.5, memory 1 GiB, cpuset 0" {
		t.Errorf("String %q", s)
	}
}

// TestThrottlesHere confines a busy loop to 0.2 cores in a real cgroup of
// this machine and reads its usage: about 0.2 cores, throttled periods.
func TestThrottlesHere(t *testing.T) {
	sys, err := Detect()
	if err != nil || os.Geteuid() != 0 {
		testenv.Unavailable(t, "cgroup limits", fmt.Errorf("detect: %v, uid %d", err, os.Geteuid()), "run as root on a machine with cgroup cpu and memory controllers")
	}
	path := fmt.Sprintf("scalelab-test/%d/node1", os.Getpid())
	g, err := sys.Create(path, Limits{CPUs: 0.2, MemoryBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	w := g.Wrap([]string{"sh", "-c", "while :; do :; done"})
	cmd := exec.Command(w[0], w[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(func() { stop(); _ = g.Remove() })
	time.Sleep(500 * time.Millisecond)
	u0, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	time.Sleep(2 * time.Second)
	u1, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	cores := float64(u1.CPUNanos-u0.CPUNanos) / 1e9 / time.Since(t0).Seconds()
	t.Logf("cgroup v%d, limit 0.2 cores: %.3f cores, %d of %d periods throttled", sys.Version, cores, u1.ThrottledPeriods-u0.ThrottledPeriods, u1.Periods-u0.Periods)
	if cores < 0.1 || cores > 0.3 {
		t.Errorf("a busy loop limited to 0.2 cores used %.3f", cores)
	}
	if u1.ThrottledPeriods <= u0.ThrottledPeriods {
		t.Errorf("no throttled period: %+v -> %+v", u0, u1)
	}
	if l := g.Limits(); l.CPUs != 0.2 || l.MemoryBytes != 64<<20 {
		t.Errorf("limits in force %+v", l)
	}
	// Empty kills what is still inside after its grace period
	if err := g.Empty(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if pids, err := g.Procs(); err != nil || len(pids) > 0 {
		t.Fatalf("after Empty: %v %v", pids, err)
	}
	stop()
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range g.sortedDirs() {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind", d)
		}
		if _, err := os.Stat(filepath.Dir(filepath.Dir(d))); !os.IsNotExist(err) {
			t.Errorf("parent %s left behind", filepath.Dir(filepath.Dir(d)))
		}
	}
}
