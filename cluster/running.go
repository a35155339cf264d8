package cluster

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// spareRoles are the roles of nodes a run can do without: it reaches the
// primary, and a dead replica only costs the cluster a copy.
var spareRoles = map[string]bool{"replica": true, "secondary": true}

// CheckRunning checks, before a run connects to the cluster, that the
// processes of the nodes the run needs are alive, so that a node killed
// outside scalelab is named instead of surfacing as a client's timeout or
// "connection refused". The run needs every node its Target addresses
// (at least one when the Target lists several, as seeds) and at least one
// node of every role but a replica's. It returns an error naming
// the dead nodes the run needs and how to start the cluster again, or,
// when only nodes the run can do without are dead, a warning naming them
// ("" when every node runs). Nodes without a recorded process (PID 0) are
// taken to run.
func (st *State) CheckRunning() (warning string, err error) {
	var dead []Node
	for _, n := range st.Nodes {
		if n.PID > 0 && !Alive(n.PID) {
			dead = append(dead, n)
		}
	}
	if len(dead) == 0 {
		return "", nil
	}
	if needed := st.neededDead(); len(needed) > 0 {
		return "", fmt.Errorf("cluster %s: %s not running; `scalelab cluster status %s` shows it; start it again with `scalelab cluster down %s && scalelab cluster up %s --name %s` (with the options it was started with)",
			st.Name, describeNodes(needed), st.Name, st.Name, st.provisionerName(), st.Name)
	}
	return fmt.Sprintf("cluster %s: %s not running; the run goes on without it (see `scalelab cluster status %s`)", st.Name, describeNodes(dead), st.Name), nil
}

// neededDead returns the dead nodes without which the run cannot work:
// the dead nodes the Target addresses when none of them runs (or the one
// it addresses), and those of a role with no running node.
func (st *State) neededDead() []Node {
	var addressed []int
	for i, n := range st.Nodes {
		if targetNames(st.Target, n) {
			addressed = append(addressed, i)
		}
	}
	var out []Node
	seen := map[int]bool{}
	if len(addressed) > 0 && !anyRunning(st.Nodes, addressed) {
		for _, i := range addressed {
			out, seen[i] = append(out, st.Nodes[i]), true
		}
	}
	byRole := map[string][]int{}
	var roles []string
	for i, n := range st.Nodes {
		if spareRoles[n.Role] {
			continue
		}
		if _, ok := byRole[n.Role]; !ok {
			roles = append(roles, n.Role)
		}
		byRole[n.Role] = append(byRole[n.Role], i)
	}
	for _, r := range roles {
		if anyRunning(st.Nodes, byRole[r]) {
			continue
		}
		for _, i := range byRole[r] {
			if !seen[i] {
				out, seen[i] = append(out, st.Nodes[i]), true
			}
		}
	}
	return out
}

// anyRunning reports whether one of the nodes at idx has a live process
// (or none recorded).
func anyRunning(nodes []Node, idx []int) bool {
	for _, i := range idx {
		if nodes[i].PID <= 0 || Alive(nodes[i].PID) {
			return true
		}
	}
	return false
}

// targetNames reports whether target holds the node's client address
// (Client, else Host:Port), not followed by another digit of a port.
func targetNames(target string, n Node) bool {
	addr := n.Client
	if addr == "" {
		if n.Host == "" || n.Port <= 0 {
			return false
		}
		addr = net.JoinHostPort(n.Host, strconv.Itoa(n.Port))
	}
	for rest := target; ; {
		i := strings.Index(rest, addr)
		if i < 0 {
			return false
		}
		rest = rest[i+len(addr):]
		if rest == "" || rest[0] < '0' || rest[0] > '9' {
			return true
		}
	}
}

// describeNodes names nodes with their role and process:
// "node1 (ferretdb, pid 1234) is" or "node2 (…), node3 (…) are".
func describeNodes(nodes []Node) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprintf("%s (%s, pid %d)", n.Name, n.Role, n.PID)
	}
	verb := " is"
	if len(nodes) > 1 {
		verb = " are"
	}
	return strings.Join(parts, ", ") + verb
}

// provisionerName is the ENGINE argument of the `cluster up` that
// started the cluster.
func (st *State) provisionerName() string {
	if st.Kind != "" {
		return st.Kind
	}
	return st.Engine
}
