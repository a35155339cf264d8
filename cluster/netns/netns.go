// Package netns gives each node of a local cluster its own Linux network
// namespace, linked by a veth pair to a bridge scalelab creates, with
// addresses from a private range (10.231.0.0/16, one /24 per cluster);
// it cuts and heals a node's link (a partition) and removes everything it
// made, also what a scalelab that crashed left behind. It drives iproute2's
// `ip` and needs root or CAP_NET_ADMIN.
package netns

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// OwnersDir records, per network id, the state directory of the cluster
// that owns it, machine-wide (a network is a machine's, whatever
// $SCALELAB_HOME made it).
const OwnersDir = "/run/scalelab-netns"

// Owner returns the state directory recorded for a network id, or "".
func Owner(id string) string {
	b, err := os.ReadFile(filepath.Join(OwnersDir, id))
	if err != nil {
		return ""
	}
	return string(b)
}

// Prefix starts the name of every bridge, veth and namespace this package
// creates, so that stale ones can be found.
const Prefix = "sl"

// Topology is a cluster's network: one bridge on the host, one namespace
// per node; recorded in the cluster's state.
type Topology struct {
	ID      string    `json:"id"`      // 6 hex digits naming the bridge and namespaces
	Bridge  string    `json:"bridge"`  // the host's bridge, slb<ID>
	Subnet  string    `json:"subnet"`  // 10.231.N.0/24
	Gateway string    `json:"gateway"` // the bridge's address: the load generator's side
	Nodes   []NodeNet `json:"nodes"`
}

// NodeNet is one node's namespace and address.
type NodeNet struct {
	Node      string `json:"node"`
	Namespace string `json:"namespace"` // sl<ID>-<node>
	HostVeth  string `json:"host_veth"` // its link's end on the bridge
	Address   string `json:"address"`   // its address, 10.231.N.(i+2)
}

// Check says whether namespaces can be made here: iproute2 present and
// the right to change the network (root or CAP_NET_ADMIN).
func Check() error {
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("network namespaces need iproute2's `ip` (apt-get install iproute2)")
	}
	if out, err := exec.Command("ip", "netns", "add", Prefix+"probe").CombinedOutput(); err != nil {
		return fmt.Errorf("network namespaces need root or CAP_NET_ADMIN: `ip netns add` answered: %s", strings.TrimSpace(string(out)))
	}
	_ = exec.Command("ip", "netns", "del", Prefix+"probe").Run()
	return nil
}

// ID is the short identifier of a cluster's network, from its state
// directory (unique per cluster on the machine).
func ID(stateDir string) string {
	h := sha256.Sum256([]byte(stateDir))
	return hex.EncodeToString(h[:3])
}

// runGone runs one `ip` command that deletes something; "already gone" is
// no error (a namespace's veth end goes with it).
func runGone(args ...string) error {
	err := run(args...)
	if err != nil && (strings.Contains(err.Error(), "Cannot find device") || strings.Contains(err.Error(), "No such file")) {
		return nil
	}
	return err
}

// run runs one `ip` command.
func run(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %s: %w", strings.Join(args, " "), strings.TrimSpace(string(out)), err)
	}
	return nil
}

// Create makes the bridge and one namespace per node for the cluster whose
// state lives in stateDir. On error it removes what it made.
func Create(stateDir string, nodes []string) (*Topology, error) {
	t, err := New(stateDir)
	if err != nil {
		return nil, err
	}
	for _, node := range nodes {
		if _, err := t.Add(node); err != nil {
			_ = t.Remove()
			return nil, err
		}
	}
	return t, nil
}

// New makes the bridge of the cluster whose state lives in stateDir, with
// a free /24; nodes are added with Add.
func New(stateDir string) (*Topology, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	id := ID(stateDir)
	n, err := freeSubnet(id)
	if err != nil {
		return nil, err
	}
	t := &Topology{ID: id, Bridge: Prefix + "b" + id, Subnet: fmt.Sprintf("10.231.%d.0/24", n), Gateway: fmt.Sprintf("10.231.%d.1", n)}
	if err := os.MkdirAll(OwnersDir, 0o755); err == nil {
		// who owns the network, for CleanStale in any scalelab on the machine
		_ = os.WriteFile(filepath.Join(OwnersDir, id), []byte(stateDir), 0o644)
	}
	for _, a := range [][]string{
		{"link", "add", t.Bridge, "type", "bridge"},
		{"addr", "add", t.Gateway + "/24", "dev", t.Bridge},
		{"link", "set", t.Bridge, "up"},
	} {
		if err := run(a...); err != nil {
			_ = t.Remove()
			return nil, fmt.Errorf("network for %s: %w", stateDir, err)
		}
	}
	return t, nil
}

// Add makes a node's namespace, its veth link to the bridge and its
// address (the next free one), and returns them; a node added before is
// returned as it is.
func (t *Topology) Add(node string) (NodeNet, error) {
	if n, err := t.node(node); err == nil {
		return n, nil
	}
	i := len(t.Nodes)
	if i >= 250 {
		return NodeNet{}, errors.New("at most 250 nodes per cluster")
	}
	base := strings.TrimSuffix(t.Gateway, ".1")
	nn := NodeNet{Node: node, Namespace: fmt.Sprintf("%s%s-%s", Prefix, t.ID, node), HostVeth: fmt.Sprintf("%sv%s%02d", Prefix, t.ID, i),
		Address: fmt.Sprintf("%s.%d", base, i+2)}
	t.Nodes = append(t.Nodes, nn)
	peer := fmt.Sprintf("%sp%s%02d", Prefix, t.ID, i)
	for _, a := range [][]string{
		{"netns", "add", nn.Namespace},
		{"link", "add", nn.HostVeth, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", nn.Namespace},
		{"link", "set", nn.HostVeth, "master", t.Bridge},
		{"link", "set", nn.HostVeth, "up"},
		{"-n", nn.Namespace, "link", "set", peer, "name", "eth0"},
		{"-n", nn.Namespace, "addr", "add", nn.Address + "/24", "dev", "eth0"},
		{"-n", nn.Namespace, "link", "set", "eth0", "up"},
		{"-n", nn.Namespace, "link", "set", "lo", "up"},
		{"-n", nn.Namespace, "route", "add", "default", "via", t.Gateway},
	} {
		if err := run(a...); err != nil {
			return nn, fmt.Errorf("network of %s: %w", node, err)
		}
	}
	return nn, nil
}

// freeSubnet picks N for 10.231.N.0/24: the first not in use on the host,
// starting from one derived from the cluster's id.
func freeSubnet(id string) (int, error) {
	out, err := exec.Command("ip", "-o", "-4", "addr").Output()
	if err != nil {
		return 0, fmt.Errorf("list addresses: %w", err)
	}
	used := string(out)
	start := 0
	for _, c := range id {
		start = (start*16 + int(c)) % 250
	}
	for k := 0; k < 250; k++ {
		n := (start+k)%250 + 1
		if !strings.Contains(used, fmt.Sprintf(" 10.231.%d.", n)) {
			return n, nil
		}
	}
	return 0, errors.New("no free /24 left in 10.231.0.0/16")
}

// node returns a node's network.
func (t *Topology) node(name string) (NodeNet, error) {
	for _, n := range t.Nodes {
		if n.Node == name {
			return n, nil
		}
	}
	return NodeNet{}, fmt.Errorf("no node %q in network %s", name, t.ID)
}

// Address is a node's address.
func (t *Topology) Address(node string) string {
	n, _ := t.node(node)
	return n.Address
}

// Wrap returns cmd run inside the node's namespace.
func (t *Topology) Wrap(node string, cmd []string) ([]string, error) {
	n, err := t.node(node)
	if err != nil {
		return nil, err
	}
	return append([]string{"ip", "netns", "exec", n.Namespace}, cmd...), nil
}

// Cut takes the node's link down inside its namespace: it reaches no one
// and no one reaches it, its process untouched (a partition).
func (t *Topology) Cut(node string) error {
	n, err := t.node(node)
	if err != nil {
		return err
	}
	return run("-n", n.Namespace, "link", "set", "eth0", "down")
}

// Heal brings the node's link up again.
func (t *Topology) Heal(node string) error {
	n, err := t.node(node)
	if err != nil {
		return err
	}
	if err := run("-n", n.Namespace, "link", "set", "eth0", "up"); err != nil {
		return err
	}
	// the default route goes with the link; put it back
	if err := run("-n", n.Namespace, "route", "replace", "default", "via", t.Gateway); err != nil {
		return err
	}
	return nil
}

// Remove deletes the namespaces (their veth ends go with them) and the
// bridge; what is already gone is no error.
func (t *Topology) Remove() error {
	var errs []error
	for _, n := range t.Nodes {
		if exists("netns", n.Namespace) {
			if err := runGone("netns", "del", n.Namespace); err != nil {
				errs = append(errs, err)
			}
		}
		if exists("link", n.HostVeth) {
			if err := runGone("link", "del", n.HostVeth); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if t.Bridge != "" && exists("link", t.Bridge) {
		if err := runGone("link", "del", t.Bridge); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 && t.ID != "" {
		_ = os.Remove(filepath.Join(OwnersDir, t.ID))
	}
	return errors.Join(errs...)
}

// exists reports whether a namespace or link of that name exists.
func exists(kind, name string) bool {
	if kind == "netns" {
		_, err := os.Stat("/run/netns/" + name)
		return err == nil
	}
	return exec.Command("ip", "link", "show", name).Run() == nil
}

// CleanStale removes every namespace, veth and bridge this package made
// whose id keep does not claim (a cluster gone, or a scalelab that crashed
// during a failed up), and returns what it removed.
func CleanStale(keep func(id string) bool) ([]string, error) {
	var removed []string
	var errs []error
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], Prefix) || len(f[0]) < len(Prefix)+7 || f[0][len(Prefix)+6] != '-' {
			continue
		}
		if id := f[0][len(Prefix) : len(Prefix)+6]; isHex(id) && !keep(id) {
			_ = os.Remove(filepath.Join(OwnersDir, id))
			if err := run("netns", "del", f[0]); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, f[0])
		}
	}
	links, _ := exec.Command("ip", "-o", "link", "show").Output()
	for _, line := range strings.Split(string(links), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		for _, kind := range []string{"b", "v"} {
			p := Prefix + kind
			if strings.HasPrefix(name, p) && len(name) >= len(p)+6 && isHex(name[len(p):len(p)+6]) && !keep(name[len(p):len(p)+6]) {
				if err := run("link", "del", name); err == nil {
					removed = append(removed, name)
				}
			}
		}
	}
	return removed, errors.Join(errs...)
}

// isHex reports whether s is lower-case hexadecimal (an id of ours).
func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// IsCut reports whether the node's link is down (a partition a run that
// died could not heal).
func (t *Topology) IsCut(node string) bool {
	n, err := t.node(node)
	if err != nil {
		return false
	}
	out, err := exec.Command("ip", "-n", n.Namespace, "-o", "link", "show", "eth0").Output()
	if err != nil {
		return false
	}
	flags, _, _ := strings.Cut(string(out), ">")
	return !strings.Contains(flags, ",UP") && !strings.Contains(flags, "<UP")
}
