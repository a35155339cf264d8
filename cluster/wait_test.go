package cluster

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/wait"
)

// TestWaitNodesBoundedByDeadline waits for a state that never comes: the
// wait ends at ctx's deadline (cluster up --timeout) with its last state.
func TestWaitNodesBoundedByDeadline(t *testing.T) {
	t.Parallel()
	st := &State{Name: "c1", Nodes: []Node{{Name: "node1", PID: os.Getpid()}}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := WaitNodesState(ctx, st, "3 nodes and status green", 20*time.Millisecond, func() (bool, string) { return false, "yellow, 2 of 3 nodes joined" })
	var te *wait.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("WaitNodesState = %v", err)
	}
	for _, want := range []string{"3 nodes and status green: not ready after", "(yellow, 2 of 3 nodes joined)", "cluster up --timeout", "raise --timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestWaitNodesDeadNode fails at once when a node's process is gone.
func TestWaitNodesDeadNode(t *testing.T) {
	t.Parallel()
	st := &State{Name: "c1", Nodes: []Node{{Name: "node2", PID: 1 << 30, LogFile: "/nonexistent/node2.log"}}}
	start := time.Now()
	err := WaitNodes(context.Background(), st, "node2", 10*time.Millisecond, func() bool { return false })
	if !errors.Is(err, ErrNodeExited) || !strings.Contains(err.Error(), "a node process exited (node2)") || strings.Contains(err.Error(), "cluster status") {
		t.Fatalf("WaitNodes = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("a dead node was noticed after %s", time.Since(start))
	}
}
