package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/scalelab/scalelab/cluster/cgroup"
)

// PrepareLimits checks, before any node starts, that st's limits can be
// applied on this machine (a cgroup hierarchy with the cpu and memory
// controllers, and the right to write it), and records them in st.
func (st *State) PrepareLimits(l cgroup.Limits) error {
	if l.IsZero() {
		return nil
	}
	sys, err := cgroup.Detect()
	if err != nil {
		return fmt.Errorf("limits %s: %w", l, err)
	}
	st.Limits = &l
	st.LimitsCgroup = fmt.Sprintf("v%d", sys.Version)
	if st.Params == nil {
		st.Params = map[string]string{}
	}
	st.Params["limits"] = l.String()
	return nil
}

// cgroupPath is a node's cgroup below each controller's root: unique per
// cluster state directory, so clusters of one name under two homes never
// share one.
func (st *State) cgroupPath(node string) string {
	h := sha256.Sum256([]byte(st.Dir))
	return fmt.Sprintf("scalelab/%s-%s/%s", st.Name, hex.EncodeToString(h[:3]), node)
}

// StartNode starts a node process of st as Start does, confined in its
// own cgroup when st has limits; it returns the PID and the cgroup path
// ("" when unconfined) to record in the node.
func (st *State) StartNode(node string, cmd []string, dir, logFile string, extraEnv []string) (int, string, error) {
	cmd, err := st.wrapNet(node, cmd)
	if err != nil {
		return 0, "", fmt.Errorf("start %s: %w", node, err)
	}
	if st.Limits == nil || st.Limits.IsZero() {
		pid, err := Start(cmd, dir, logFile, extraEnv)
		return pid, "", err
	}
	sys, err := cgroup.Detect()
	if err != nil {
		return 0, "", fmt.Errorf("start %s: limits: %w", node, err)
	}
	path := st.cgroupPath(node)
	g, err := sys.Create(path, *st.Limits)
	if err != nil {
		return 0, "", fmt.Errorf("start %s: limits: %w", node, err)
	}
	pid, err := Start(g.Wrap(cmd), dir, logFile, extraEnv)
	if err != nil {
		_ = g.Remove()
		return 0, "", err
	}
	return pid, path, nil
}

// Launch starts n.Cmd in dir as StartNode does (n.LogFile, n.Env), sets
// n's PID and cgroup and appends n to st.Nodes; when the start fails n is
// not appended.
func (st *State) Launch(n Node, dir string) (Node, error) {
	pid, cg, err := st.StartNode(n.Name, n.Cmd, dir, n.LogFile, n.Env)
	if err != nil {
		return n, err
	}
	n.PID, n.Cgroup = pid, cg
	st.Nodes = append(st.Nodes, n)
	return n, nil
}

// AddNode launches n (Launch) and sets its client address (SetClient).
// When SetClient fails, n stays in st.Nodes (its process runs), so that
// stopping the cluster after the failed start stops it too.
func (st *State) AddNode(n Node, dir string) (Node, error) {
	n, err := st.Launch(n, dir)
	if err != nil {
		return n, err
	}
	added := &st.Nodes[len(st.Nodes)-1]
	err = st.SetClient(added)
	return *added, err
}

// Restart starts a stopped node of st again from its recorded command, in
// its network namespace and its cgroup when it had them.
func (st *State) Restart(n Node, dir string) (int, error) {
	cmd, err := st.wrapNet(n.Name, n.Cmd)
	if err != nil {
		return 0, fmt.Errorf("restart %s: %w", n.Name, err)
	}
	if n.Cgroup == "" {
		return Start(cmd, dir, n.LogFile, n.Env)
	}
	g, err := cgroup.Open(n.Cgroup)
	if err != nil {
		return 0, fmt.Errorf("restart %s: %w", n.Name, err)
	}
	return Start(g.Wrap(cmd), dir, n.LogFile, n.Env)
}

// removeCgroups removes the cgroups of st's nodes (stopped already).
func removeCgroups(st *State) error {
	var errs []error
	for _, n := range st.Nodes {
		if n.Cgroup == "" {
			continue
		}
		g, err := cgroup.Open(n.Cgroup)
		if err != nil {
			continue // gone already
		}
		if err := g.Empty(5 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("empty cgroup of %s: %w", n.Name, err))
		}
		if err := g.Remove(); err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup of %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}
