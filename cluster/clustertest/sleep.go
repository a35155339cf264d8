// Package clustertest holds what tests of clusters, the cluster commands
// and experiments share: a provisioner whose nodes are sleep processes, so
// that clusters can be started, watched, faulted and stopped without a
// store, and recorded cluster states for tests that only read them.
package clustertest

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/setting"
)

// SleepProvisioner provisions "memory" clusters whose nodes are `sleep
// 600` processes (node1, node2, … on 127.0.0.1, ports 1001, 1002, …,
// each with its log file and command, so that faults can restart them).
// The option fail=yes makes Up start every node and then fail, so that
// tests see a failed start clean up; fail=exit makes the last node write
// a few lines ending with ExitLine (and blank lines) to its log and exit
// while Up waits for the nodes, as a server that refuses its
// configuration does; fail=hang makes Up wait for its context to end, as
// a start too slow for its timeout does. heap is recorded and not used. A test binary
// registers it once: cluster.Register(SleepProvisioner{}).
type SleepProvisioner struct{}

// ExitLine is the last line a node started with fail=exit writes to its
// log before it exits.
const ExitLine = "FATAL: configuration refused (fail=exit), exiting"

// exitScript writes a log as a failing server does, ExitLine last but
// for blank lines, and exits with status 3.
const exitScript = `for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "LOG: starting, step $i"; done; echo; echo "` + ExitLine + `"; echo; echo; exit 3`

// Engine is the engine its clusters serve: "memory".
func (SleepProvisioner) Engine() string { return "memory" }

// Up starts spec.Nodes (at least one) sleep processes in st.Dir.
func (SleepProvisioner) Up(ctx context.Context, spec cluster.Spec, st *cluster.State) error {
	nodes := max(spec.Nodes, 1)
	for i := 1; i <= nodes; i++ {
		name := fmt.Sprintf("node%d", i)
		cmd := []string{"sleep", "600"}
		if i == nodes && spec.Options["fail"] == "exit" {
			cmd = []string{"sh", "-c", exitScript}
		}
		log := filepath.Join(st.Dir, name+".log")
		pid, err := cluster.Start(cmd, st.Dir, log, nil)
		if err != nil {
			return err
		}
		st.Nodes = append(st.Nodes, cluster.Node{Name: name, Role: "data", PID: pid, Host: "127.0.0.1", Port: 1000 + i,
			DataDir: st.Dir, LogFile: log, Cmd: cmd})
	}
	switch spec.Options["fail"] {
	case "yes":
		return fmt.Errorf("injected failure")
	case "exit":
		// a wait no node passes: it ends when the last node exits
		return cluster.WaitNodes(ctx, st, "the nodes to answer", 20*time.Millisecond, func() bool { return false })
	case "hang":
		<-ctx.Done()
		return fmt.Errorf("setup: signal: killed")
	}
	st.Target, st.Auth = "memory://", "none (test)"
	return nil
}

// Status reports whether each node's process is alive.
func (SleepProvisioner) Status(ctx context.Context, st *cluster.State) ([]cluster.NodeStatus, error) {
	var out []cluster.NodeStatus
	for _, n := range st.Nodes {
		out = append(out, cluster.NodeStatus{Node: n, Alive: cluster.Alive(n.PID)})
	}
	return out, nil
}

// Options are nodes (1 to 16), fail (yes|exit|hang|no) and heap.
func (SleepProvisioner) Options() cluster.Options {
	return cluster.Options{Specs: []setting.Spec{cluster.NodesOption(1, 16, "sleep processes"),
		{Key: "fail", Kind: setting.Enum, Default: "no", Allowed: []string{"yes", "exit", "hang", "no"}, Description: "fail the start (exit: the last node exits; hang: wait for the timeout)"},
		{Key: cluster.OptHeap, Kind: setting.String, Description: "recorded, not used"}}}
}
