package apptier

import (
	"fmt"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
)

// Netns reports that the app servers bind to the address cluster.NodeHost
// gives them, so --netns puts each in a network namespace of its own; the
// balancer stays on the host, in front of them like the load generator.
func (Provisioner) Netns() bool { return true }

// prepareNet readies an app cluster started with --netns: a server in its
// own namespace reaches no loopback and no other cluster's bridge, so it
// reaches the store and cache clusters through proxies on its own bridge
// (the links' proxies, started here if --link did not ask for delay).
func prepareNet(st *cluster.State, o options) error {
	if st.Net == nil || (o.store == nil && o.cache == nil) {
		return nil
	}
	if err := unroutable(o); err != nil {
		return err
	}
	ls := st.Links
	if ls == nil {
		ls = &cluster.Links{}
	}
	if ls.Proxied {
		return nil
	}
	ls.Proxied = true
	if err := st.PrepareLinks(ls); err != nil {
		return fmt.Errorf("app: proxies to the store: %w", err)
	}
	st.Params["links"] += " (proxies on every path: the servers reach the store through them)"
	return nil
}

// routes are the --route flags of the server node: each node of the store
// and cache clusters through a proxy on the app cluster's bridge, which
// the server's link delays and its partition cuts.
func routes(st *cluster.State, o options, node string) ([]string, error) {
	if st.Net == nil {
		return nil, nil
	}
	var args []string
	for _, c := range []*cluster.State{o.store, o.cache} {
		if c == nil {
			continue
		}
		for _, n := range c.Nodes {
			to, err := st.OutsideAddr(node, c.Name+"."+n.Name, n.ClientAddress())
			if err != nil {
				return nil, fmt.Errorf("app: %s to %s.%s: %w", node, c.Name, n.Name, err)
			}
			args = append(args, "--route", cluster.Route{From: n.ClientAddress(), To: to}.String())
		}
	}
	return args, nil
}

// unroutable refuses a store or cache cluster that servers in namespaces
// of their own cannot reach through proxies: Cassandra, whose driver
// follows the addresses the ring announces.
func unroutable(o options) error {
	for _, c := range []*cluster.State{o.store, o.cache} {
		if c != nil && engine.FollowsAnnounced(c.Engine) {
			return fmt.Errorf("app: --netns with the %s cluster %s: its driver reaches the nodes at the addresses the cluster announces, which a server in a namespace of its own cannot; start the app cluster without --netns", c.Engine, c.Name)
		}
	}
	return nil
}
