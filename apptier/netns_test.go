package apptier

import (
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/netns"
	_ "github.com/scalelab/scalelab/engine/cassandra" // the engine whose driver follows the ring's addresses
)

// TestNetnsRefusesCassandra: servers in namespaces of their own cannot
// follow a Cassandra driver to the ring's announced addresses, so the
// app cluster says so before starting anything; without a store cluster
// (the servers' own SQLite file) or without --netns nothing is needed.
func TestNetnsRefusesCassandra(t *testing.T) {
	st := &cluster.State{Name: "web", Net: &netns.Topology{}, Params: map[string]string{}}
	err := prepareNet(st, options{store: &cluster.State{Name: "ring", Engine: "cassandra"}})
	if err == nil || !strings.Contains(err.Error(), "cassandra cluster ring") || !strings.Contains(err.Error(), "without --netns") {
		t.Errorf("a cassandra store with --netns: %v", err)
	}
	if err := prepareNet(st, options{}); err != nil || st.Links != nil {
		t.Errorf("no store cluster: %v, links %+v", err, st.Links)
	}
	if err := prepareNet(&cluster.State{}, options{store: &cluster.State{Engine: "cassandra"}}); err != nil {
		t.Errorf("without --netns: %v", err)
	}
	if args, err := routes(&cluster.State{}, options{store: &cluster.State{Nodes: []cluster.Node{{Host: "127.0.0.1", Port: 5432}}}}, "app1"); err != nil || args != nil {
		t.Errorf("routes without --netns: %v %v", args, err)
	}
}
