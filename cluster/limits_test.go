package cluster

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/internal/testenv"
)

// inCgroup reports whether pid is (within 2 s: its first instruction
// joins) in a cgroup whose path ends in path.
func inCgroup(t *testing.T, pid int, path string) bool {
	t.Helper()
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "/"+path+"\n") {
			return true
		}
	}
	return false
}

// TestNodeInCgroup starts a node under limits: it runs in its own cgroup
// from the start, a restart puts the new process in the same cgroup, and
// StopAll removes the cgroup.
func TestNodeInCgroup(t *testing.T) {
	if _, err := cgroup.Detect(); err != nil || os.Geteuid() != 0 {
		testenv.Unavailable(t, "cgroup limits", fmt.Errorf("%v (uid %d)", err, os.Geteuid()), "run as root on a machine with cgroup cpu and memory controllers")
	}
	dir := t.TempDir()
	st := &State{Name: "limits", Dir: dir}
	if err := st.PrepareLimits(cgroup.Limits{CPUs: 0.5, MemoryBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	cmd := []string{"sh", "-c", "sleep 60 & wait"}
	pid, cg, err := st.StartNode("node1", cmd, dir, dir+"/node1.log", nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Nodes = append(st.Nodes, Node{Name: "node1", PID: pid, Cmd: cmd, LogFile: dir + "/node1.log", Cgroup: cg})
	t.Cleanup(func() { _ = StopAll(st, time.Second) })
	if !strings.HasPrefix(cg, "scalelab/limits-") || !inCgroup(t, pid, cg) {
		t.Fatalf("node1 (pid %d) not in its cgroup %q", pid, cg)
	}
	if st.Params["limits"] != "cpus 0.5, memory 64 MiB" || st.LimitsCgroup == "" {
		t.Errorf("state params %v, cgroup %q", st.Params, st.LimitsCgroup)
	}
	if err := Stop(pid, time.Second); err != nil {
		t.Fatal(err)
	}
	pid2, err := st.Restart(st.Nodes[0], dir)
	if err != nil {
		t.Fatal(err)
	}
	st.Nodes[0].PID = pid2
	if pid2 == pid || !inCgroup(t, pid2, cg) {
		t.Fatalf("restarted node (pid %d) not in cgroup %s", pid2, cg)
	}
	if err := StopAll(st, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := cgroup.Open(cg); err == nil {
		t.Errorf("cgroup %s left after StopAll", cg)
	}
}
