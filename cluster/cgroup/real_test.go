package cgroup

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/internal/testenv"
)

// realSystem is this machine's hierarchy, for tests that write it; they
// are skipped (failed under CI) without one or without root.
func realSystem(t *testing.T) *System {
	t.Helper()
	sys, err := Detect()
	if err == nil && os.Geteuid() != 0 {
		err = fmt.Errorf("not root (uid %d)", os.Geteuid())
	}
	if err != nil {
		testenv.Unavailable(t, "cgroup limits", err, "run the tests as root on a machine with the cgroup cpu and memory controllers")
	}
	return sys
}

// testPath is a path of its own below scalelab-test.
func testPath(t *testing.T, node string) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "scalelab-test/" + hex.EncodeToString(b) + "/" + node
}

// assertGone checks that g's directories and their parent are gone.
func assertGone(t *testing.T, g *Group) {
	t.Helper()
	for _, d := range g.dirList() {
		for _, x := range []string{d, filepath.Dir(d)} {
			if _, err := os.Stat(x); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s left behind (%v)", x, err)
			}
		}
	}
}

// TestRealCPULimit confines a busy loop to 0.2 cores in a real cgroup of
// this machine: it gets about 0.2 cores and is throttled.
func TestRealCPULimit(t *testing.T) {
	sys := realSystem(t)
	g, err := sys.Create(testPath(t, "node1"), Limits{CPUs: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	w := g.Wrap([]string{"sh", "-c", "while :; do :; done"})
	cmd := exec.Command(w[0], w[1:]...)
	if err := cmd.Start(); err != nil {
		_ = g.Remove()
		t.Fatal(err)
	}
	done := false
	stop := func() {
		if !done {
			done = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(func() { stop(); _ = g.Remove() })
	if l := g.Limits(); l != (Limits{CPUs: 0.2}) {
		t.Errorf("limits in force %+v", l)
	}
	time.Sleep(2 * time.Second)
	if pids, err := g.Procs(); err != nil || len(pids) != 1 || pids[0] != cmd.Process.Pid {
		t.Errorf("processes in the group %v (%v), want [%d]", pids, err, cmd.Process.Pid)
	}
	// The limit caps every window; a machine busy with other work can
	// leave the loop less than its quota, so a few windows are tried
	// for one in which it gets about its quota and is throttled.
	ok := false
	for i := 0; i < 5 && !ok; i++ {
		u0, err := g.Usage()
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		time.Sleep(time.Second)
		u1, err := g.Usage()
		if err != nil {
			t.Fatal(err)
		}
		cores := float64(u1.CPUNanos-u0.CPUNanos) / 1e9 / time.Since(t0).Seconds()
		throttled := u1.ThrottledPeriods - u0.ThrottledPeriods
		t.Logf("cgroup v%d, limit 0.2 cores, window %d: %.3f cores, %d of %d periods throttled (%.0f ms), memory %s",
			sys.Version, i+1, cores, throttled, u1.Periods-u0.Periods, float64(u1.ThrottledNanos-u0.ThrottledNanos)/1e6, FormatBytes(u1.MemoryBytes))
		if cores > 0.3 {
			t.Fatalf("a busy loop limited to 0.2 cores used %.3f", cores)
		}
		ok = cores >= 0.1 && throttled > 0
	}
	if !ok {
		t.Errorf("in no window did the loop get 0.1 to 0.3 cores and get throttled")
	}
	stop()
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, g)
}

// TestRealMemoryLimit makes a group with a 64 MiB limit (pinned to CPU 0
// where the hierarchy has a cpuset controller), reads the limits back and
// runs a command in it: it is in the group in every controller.
func TestRealMemoryLimit(t *testing.T) {
	sys := realSystem(t)
	want := Limits{MemoryBytes: 64 << 20}
	if sys.available(Limits{CPUSet: "0"}) == nil {
		want.CPUSet = "0"
	}
	path := testPath(t, "mem")
	g, err := sys.Create(path, want)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Remove() })
	if l := g.Limits(); l != want {
		t.Errorf("limits in force %+v, want %+v", l, want)
	}
	o, err := Open(path)
	if err != nil || o.Limits() != want {
		t.Fatalf("Open: %v, limits %+v", err, o)
	}
	w := o.Wrap([]string{"sh", "-c", "cat /proc/self/cgroup; grep Cpus_allowed_list /proc/self/status"})
	out, err := exec.Command(w[0], w[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v: %s", w, err, out)
	}
	text := string(out)
	ctrls := []string{"cpu", "cpuacct", "memory"}
	if want.CPUSet != "" {
		ctrls = append(ctrls, "cpuset")
	}
	if sys.Version == 2 {
		ctrls = []string{""}
	}
	for _, c := range ctrls {
		found := false
		for _, line := range strings.Split(text, "\n") {
			// ID:CONTROLLERS:PATH
			f := strings.SplitN(line, ":", 3)
			if len(f) == 3 && (c == "" && f[1] == "" || c != "" && strings.Contains(","+f[1]+",", ","+c+",")) {
				found = strings.HasSuffix(f[2], "/"+path)
			}
		}
		if !found {
			t.Errorf("the command is not in %s of controller %q:\n%s", path, c, text)
		}
	}
	if want.CPUSet != "" && !strings.Contains(text, "Cpus_allowed_list:\t0\n") {
		t.Errorf("not pinned to CPU 0:\n%s", text)
	}
	if u, err := g.Usage(); err != nil || u.CPUNanos == 0 {
		t.Errorf("usage %+v %v", u, err)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, g)
	if _, err := Open(path); err == nil {
		t.Error("opened a removed group")
	}
}

// TestRealCreateFails asks the kernel for a CPU it does not have: Create
// fails and leaves nothing behind.
func TestRealCreateFails(t *testing.T) {
	sys := realSystem(t)
	path := testPath(t, "bad")
	g, err := sys.Create(path, Limits{CPUs: 0.5, MemoryBytes: 64 << 20, CPUSet: "4095"})
	if err == nil {
		_ = g.Remove()
		t.Fatal("Create with CPU 4095 succeeded")
	}
	t.Logf("Create with CPU 4095: %v", err)
	probe, err2 := sys.group(path)
	if err2 != nil {
		t.Fatal(err2)
	}
	assertGone(t, probe)
}

// TestRealRemoveBusy removes a group with a process in it: an error
// naming the directory and the process, the group intact.
func TestRealRemoveBusy(t *testing.T) {
	sys := realSystem(t)
	g, err := sys.Create(testPath(t, "busy"), Limits{CPUs: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	w := g.Wrap([]string{"sleep", "60"})
	cmd := exec.Command(w[0], w[1:]...)
	if err := cmd.Start(); err != nil {
		_ = g.Remove()
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = g.Remove() }()
	// the command has joined every directory once it runs as sleep
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid)); strings.HasPrefix(string(b), "sleep\x00") {
			break
		}
	}
	err = g.Remove()
	if err == nil || strings.Count(err.Error(), fmt.Sprintf("processes [%d] still inside", cmd.Process.Pid)) != len(g.dirList()) {
		t.Fatalf("Remove of a busy group: %v", err)
	}
	t.Logf("Remove of a busy group: %v", err)
	for _, d := range g.dirList() {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("busy group removed: %v", err)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, g)
}
