package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// OneServer is what a provisioner of one-server clusters (Redis,
// memcached) tells about its server; its methods are the node, its start,
// its status and its health, written once for all of them.
type OneServer struct {
	// Engine names the server in errors and waits ("redis").
	Engine string
	// Binary is the server's program on PATH ("redis-server"), BinaryEnv
	// the environment variable that names another, Package Debian's
	// package that installs it, NotFound the error a miss wraps.
	Binary, BinaryEnv, Package string
	NotFound                   error
	// Answers returns nil when the server at addr answers a request of
	// its protocol; it returns within a few seconds.
	Answers func(ctx context.Context, st *State, addr string) error
	// Facts returns the server's own facts for `cluster status`, such as
	// its version, clients and memory; Status keeps those named in
	// FactKeys.
	Facts    func(ctx context.Context, st *State, addr string) (map[string]string, error)
	FactKeys []string
}

// InstallHint says how to get the server.
func (s OneServer) InstallHint() string {
	return fmt.Sprintf("install it with `make setup` or `apt-get update && apt-get install -y %s` (Debian's), or point %s at a %s binary", s.Package, s.BinaryEnv, s.Binary)
}

// FindBinary returns the server's program: $BinaryEnv, else Binary on
// PATH, else Debian's /usr/bin/Binary; the error wraps NotFound and says
// how to install it.
func (s OneServer) FindBinary() (string, error) {
	return FindBinary(s.NotFound, s.BinaryEnv, s.Binary, s.InstallHint(), "/usr/bin")
}

// ParamVersion is the cluster param holding the server's version, as it
// prints it.
const ParamVersion = "version"

// Node returns the cluster's node1: role server, on a free loopback port
// (by the purpose Engine in Ports), with its data directory (not made
// yet) and log file under st.Dir.
func (s OneServer) Node(st *State) (Node, error) {
	port, err := FreePort(Loopback)
	if err != nil {
		return Node{}, fmt.Errorf("%s: %w", s.Engine, err)
	}
	return Node{Name: "node1", Role: "server", Host: Loopback, Port: port, Ports: map[string]int{s.Engine: port},
		DataDir: filepath.Join(st.Dir, "node1"), LogFile: filepath.Join(st.Dir, "node1.log")}, nil
}

// Start starts node (its Cmd) detached, in its cgroup when the cluster has
// limits, adds it to st, saves st, sets st.Target to target(its client
// address) and returns once the server answers or ctx ends.
func (s OneServer) Start(ctx context.Context, st *State, node Node, target func(addr string) string) error {
	node, err := st.Launch(node, node.DataDir)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Engine, err)
	}
	if err := st.Save(); err != nil {
		return err
	}
	addr := node.ClientAddress()
	st.Target = target(addr)
	if err := WaitNodes(ctx, st, s.Engine+" at "+addr, 50*time.Millisecond, func() bool { return s.Answers(ctx, st, addr) == nil }); err != nil {
		return fmt.Errorf("%s: %w", s.Engine, err)
	}
	return nil
}

// Status reports whether each node runs and, when it does, its FactKeys
// from Facts (or the error that kept them).
func (s OneServer) Status(ctx context.Context, st *State) ([]NodeStatus, error) {
	out := make([]NodeStatus, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		ns := NodeStatus{Node: n, Alive: Alive(n.PID), Detail: map[string]string{}}
		if ns.Alive {
			facts, err := s.Facts(ctx, st, n.hostPort())
			if err != nil {
				ns.Detail["error"] = err.Error()
			}
			for _, k := range s.FactKeys {
				if v, ok := facts[k]; ok {
					ns.Detail[k] = v
				}
			}
		}
		out = append(out, ns)
	}
	return out, nil
}

// Health is green when every server answers, red when a server's process
// runs but it does not answer, unreachable when no process runs.
func (s OneServer) Health(ctx context.Context, st *State) (Health, error) {
	h := Health{Status: Unreachable, Of: len(st.Nodes), Detail: map[string]string{}}
	for _, n := range st.Nodes {
		switch {
		case !Alive(n.PID):
			h.Detail[n.Name] = "down"
		case s.Answers(ctx, st, n.hostPort()) != nil:
			h.Detail[n.Name] = "not answering"
			if h.Status == Unreachable {
				h.Status = Red
			}
		default:
			h.Nodes++
		}
	}
	if h.Nodes == len(st.Nodes) && h.Nodes > 0 {
		h.Status = Green
	}
	return h, nil
}

// RecordVersion sets st's ParamVersion to what bin prints with args (such
// as --version), when it prints it.
func RecordVersion(ctx context.Context, st *State, bin string, args ...string) {
	if out, err := exec.CommandContext(ctx, bin, args...).Output(); err == nil {
		st.Params[ParamVersion] = strings.TrimSpace(string(out))
	}
}
