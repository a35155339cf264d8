package cluster

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// deadPID returns the PID of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

func TestCheckRunning(t *testing.T) {
	live, dead := os.Getpid(), deadPID(t)
	pg := func(primary, replica int) *State {
		return &State{Name: "pg1", Engine: "postgres", Target: "postgres://scalelab@127.0.0.1:5001/scalelab", Nodes: []Node{
			{Name: "node1", Role: "primary", PID: primary, Host: "127.0.0.1", Port: 5001},
			{Name: "node2", Role: "replica", PID: replica, Host: "127.0.0.1", Port: 5002}}}
	}
	ferret := &State{Name: "f2", Engine: "mongodb", Kind: "ferretdb", Target: "mongodb://scalelab@127.0.0.1:27018/scalelab", Nodes: []Node{
		{Name: "node1", Role: "ferretdb", PID: live, Host: "127.0.0.1", Port: 27018},
		{Name: "node2", Role: "postgres", PID: dead, Host: "127.0.0.1", Port: 5003}}}
	peers := &State{Name: "m1", Engine: "memory", Target: "memory://", Nodes: []Node{
		{Name: "node1", Role: "data", PID: dead}, {Name: "node2", Role: "data", PID: live}}}
	for _, c := range []struct {
		name      string
		st        *State
		err, warn string
	}{
		{"all running", pg(live, live), "", ""},
		{"dead primary", pg(dead, live), "cluster pg1: node1 (primary, pid ", ""},
		{"dead replica", pg(live, dead), "", "cluster pg1: node2 (replica, pid "},
		{"dead backend", ferret, "scalelab cluster down f2 && scalelab cluster up ferretdb --name f2", ""},
		{"one dead peer", peers, "", "node1 (data, pid "},
		{"port prefix", &State{Name: "x", Target: "redis://127.0.0.1:63790", Nodes: []Node{
			{Name: "node1", Role: "replica", PID: dead, Host: "127.0.0.1", Port: 6379}, {Name: "node2", Role: "primary", PID: live, Host: "127.0.0.1", Port: 7000}}}, "", "node1"},
	} {
		warn, err := c.st.CheckRunning()
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "not running")):
			t.Errorf("%s: error %v, want one holding %q", c.name, err, c.err)
		case c.warn == "" && warn != "" || !strings.Contains(warn, c.warn):
			t.Errorf("%s: warning %q, want %q", c.name, warn, c.warn)
		}
	}
}
