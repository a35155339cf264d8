package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartStopAlive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pid, err := Start([]string{"sleep", "60"}, dir, filepath.Join(dir, "log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !Alive(pid) {
		t.Fatal("started process is not alive")
	}
	if err := Stop(pid, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if Alive(pid) {
		t.Fatal("stopped process is alive")
	}
	// A process ignoring SIGTERM is killed after the grace period.
	pid, err = Start([]string{"sh", "-c", "trap '' TERM; sleep 60"}, dir, filepath.Join(dir, "log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if err := Stop(pid, 300*time.Millisecond); err != nil || Alive(pid) || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("stop of a TERM-ignoring process: %v after %s", err, time.Since(start))
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "pw")
	pw, err := NewSecret(p)
	if err != nil || len(pw) < 20 {
		t.Fatalf("%q %v", pw, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o", fi.Mode().Perm())
	}
	if got, err := ReadSecret(p); err != nil || got != pw {
		t.Fatalf("read back %q %v", got, err)
	}
	os.Chmod(p, 0o644)
	if _, err := ReadSecret(p); err == nil {
		t.Fatal("a world-readable secret file must be refused")
	}
}

func TestStateSaveLoadList(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	if _, err := Load("nope"); err == nil {
		t.Fatal("missing cluster loaded")
	}
	if err := CheckName("../x"); err == nil {
		t.Fatal("bad name accepted")
	}
	st := &State{Name: "c1", Engine: "x", Dir: Dir("c1"), Nodes: []Node{{Name: "node1", PID: 1, Port: 5}}}
	os.MkdirAll(st.Dir, 0o700)
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	got, err := Load("c1")
	if err != nil || got.Nodes[0].Port != 5 {
		t.Fatalf("%+v %v", got, err)
	}
	names, _ := List()
	if len(names) != 1 || names[0] != "c1" {
		t.Fatalf("List = %v", names)
	}
	if p, err := FreePort("127.0.0.1"); err != nil || p == 0 {
		t.Fatal(err)
	}
}

// TestAddNode starts a node with its environment, records it with its own
// address as the client's, and leaves st.Nodes alone when the start or the
// client address fails.
func TestAddNode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := &State{Name: "add", Dir: dir}
	t.Cleanup(func() { _ = StopAll(st, time.Second) })
	in := Node{Name: "node1", Role: "data", Host: Loopback, Port: 1001, Cmd: []string{"sleep", "60"},
		LogFile: filepath.Join(dir, "node1.log"), Env: []string{"SCALELAB_ADD_NODE_TEST=1"}}
	n, err := st.AddNode(in, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !Alive(n.PID) || n.Cgroup != "" || n.Client != "" || n.ClientAddress() != "127.0.0.1:1001" {
		t.Errorf("node %+v", n)
	}
	if len(st.Nodes) != 1 || st.Nodes[0].PID != n.PID || st.Nodes[0].Role != "data" || st.Nodes[0].LogFile != in.LogFile {
		t.Fatalf("nodes %+v", st.Nodes)
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", n.PID))
	if err != nil || !strings.Contains(string(env), "SCALELAB_ADD_NODE_TEST=1\x00") {
		t.Errorf("node's environment (%v) lacks its Env", err)
	}

	if _, err := st.AddNode(Node{Name: "node2", LogFile: filepath.Join(dir, "node2.log")}, dir); err == nil || len(st.Nodes) != 1 {
		t.Errorf("no command: %v, nodes %d", err, len(st.Nodes))
	}

	// links that proxy, with no proxies' server: SetClient fails, and the
	// started node is kept in the state so that stopping the cluster stops it
	st.Links = &Links{Proxied: true, API: "127.0.0.1:1"}
	n3, err := st.AddNode(Node{Name: "node3", Host: Loopback, Port: 1003, Cmd: []string{"sleep", "60"}, LogFile: filepath.Join(dir, "node3.log")}, dir)
	if err == nil || len(st.Nodes) != 2 || st.Nodes[1].PID != n3.PID || !Alive(n3.PID) {
		t.Errorf("client address unavailable: %v, nodes %+v", err, st.Nodes)
	}
	st.Links = nil
	if err := StopAll(st, time.Second); err != nil || Alive(n3.PID) {
		t.Errorf("stop all: %v; node3 alive: %v", err, Alive(n3.PID))
	}
}
