package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/scalelab/scalelab/cluster/netns"
)

// Loopback is the address nodes bind to without --netns.
const Loopback = "127.0.0.1"

// Networked is an optional capability of a Provisioner whose nodes bind to
// the address NodeHost gives them, so that --netns can put each in a
// namespace of its own.
type Networked interface {
	Netns() bool
}

// NetnsCapable names the provisioners whose nodes can each have a network
// namespace of their own (--netns).
func NetnsCapable() []string {
	var names []string
	for _, name := range provisioners.Names() {
		if p, _ := provisioners.Lookup(name); p != nil {
			if n, ok := p.(Networked); ok && n.Netns() {
				names = append(names, name)
			}
		}
	}
	return names
}

// PrepareNet makes the cluster's bridge (--netns) before any node starts;
// the nodes' namespaces come with NodeHost.
func (st *State) PrepareNet(p Provisioner) error {
	if n, ok := p.(Networked); !ok || !n.Netns() {
		return fmt.Errorf("--netns: the %s provisioner binds its nodes to loopback only; provisioners that support --netns: %s", p.Engine(), strings.Join(NetnsCapable(), ", "))
	}
	t, err := netns.New(st.Dir)
	if err != nil {
		return fmt.Errorf("--netns: %w", err)
	}
	st.Net = t
	if st.Params == nil {
		st.Params = map[string]string{}
	}
	st.Params["network"] = fmt.Sprintf("namespaces on bridge %s, %s", t.Bridge, t.Subnet)
	return nil
}

// NodeHost is the address a node binds to: its namespace's (made now)
// with --netns, loopback otherwise.
func (st *State) NodeHost(node string) (string, error) {
	if st.Net == nil {
		return Loopback, nil
	}
	n, err := st.Net.Add(node)
	if err != nil {
		return "", err
	}
	return n.Address, st.Save()
}

// OnHost reports whether node, in a cluster with a network of its own,
// runs on the host: NodeHost never gave it an address (an app cluster's
// balancer), so it has no namespace and no link. A name that is no node
// of the cluster (another cluster's node at the end of a proxy) is on the
// host too.
func (st *State) OnHost(node string) bool {
	return st.Net != nil && st.Net.Address(node) == ""
}

// wrapNet runs cmd in the node's namespace when the cluster has one; a
// node on the host (OnHost) runs as it is.
func (st *State) wrapNet(node string, cmd []string) ([]string, error) {
	if st.Net == nil || st.OnHost(node) {
		return cmd, nil
	}
	return st.Net.Wrap(node, cmd)
}

// removeNet removes the cluster's network (nodes stopped already).
func removeNet(st *State) error {
	if st.Net == nil {
		return nil
	}
	if err := st.Net.Remove(); err != nil {
		return fmt.Errorf("remove the network of %s: %w", st.Name, err)
	}
	return nil
}

// CleanStaleNets removes the networks of clusters that no longer exist (a
// scalelab that crashed during `cluster up`, a state directory deleted by
// hand) and returns what it removed. Without iproute2 or the right to
// change the network there is nothing of ours to clean.
func CleanStaleNets() ([]string, error) {
	if _, err := exec.LookPath("ip"); err != nil || os.Geteuid() != 0 {
		return nil, nil
	}
	// A network is stale when the cluster that made it has no state any
	// more, whichever $SCALELAB_HOME it lived in.
	return netns.CleanStale(func(id string) bool {
		dir := netns.Owner(id)
		if dir == "" {
			return false
		}
		_, err := os.Stat(filepath.Join(dir, "cluster.json"))
		return err == nil
	})
}
