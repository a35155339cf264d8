package search

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/setting"
)

func TestParseEntryNodes(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{"": "", "node1": "node1", " node1 , node3 ": "node1|node3", "127.0.0.1:9200,node2": "127.0.0.1:9200|node2"} {
		got, err := ParseEntryNodes(v)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("%q: %v %v, want %q", v, got, err, want)
		}
	}
	for _, bad := range []string{"http://node1", "node 1", "a/b"} {
		if _, err := ParseEntryNodes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	e, _ := engine.Lookup(Elasticsearch)
	set := setting.NewSet(e.Settings()...)
	if err := set.Apply("elasticsearch.entry_nodes=http://x:1"); !errors.Is(err, setting.ErrBadValue) {
		t.Errorf("a URL as an entry node: %v", err)
	}
}

// TestEntryNodes: entry_nodes=NAME sends every request to that node, also
// one the target leaves out (a dedicated cluster manager), found by its
// name in _nodes/http or in the --cluster's state; the client counts its
// requests per node; unknown names and client_nodes beside it are refused.
func TestEntryNodes(t *testing.T) {
	t.Parallel()
	cm := newFake(t, "", nil)
	var data *fakeServer
	data = newFake(t, "", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/_nodes/http" {
			return false
		}
		fmt.Fprintf(w, `{"nodes":{"id1":{"name":"node1","http":{"publish_address":"localhost/%s"}},"id2":{"name":"node2","http":{"publish_address":"%s"}}}}`,
			strings.TrimPrefix(cm.URL, "http://"), strings.TrimPrefix(data.URL, "http://"))
		return true
	})
	ctx := context.Background()
	c := mustOpen(t, Elasticsearch, data.URL, "elasticsearch.entry_nodes=node1")
	for range 7 {
		if _, _, err := c.Do(ctx, http.MethodPost, "/orders/_search", "", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if cm.count("POST /orders/_search") != 7 || data.count("POST /orders/_search") != 0 {
		t.Errorf("searches: %d to node1, %d to node2; want all 7 to node1", cm.count("POST /orders/_search"), data.count("POST /orders/_search"))
	}
	if got := c.RequestsPerNode(); got["node1"] != 8 || len(got) != 1 { // GET / at open, then 7 searches
		t.Errorf("client's counts %v, want node1=8", got)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := "node1=" + cm.URL; info.Extra["entry_nodes"] != want || info.Target != cm.URL {
		t.Errorf("info entry_nodes %q target %q, want %q", info.Extra["entry_nodes"], info.Target, want)
	}

	_, err = open(t, Elasticsearch, data.URL, "elasticsearch.entry_nodes=nod1")
	if !errors.Is(err, setting.ErrBadValue) || !strings.Contains(err.Error(), `did you mean "node1"`) || !strings.Contains(err.Error(), "node1, node2") {
		t.Errorf("unknown entry node: %v", err)
	}
	if _, err := open(t, Elasticsearch, data.URL, "elasticsearch.entry_nodes=node1", "elasticsearch.client_nodes=1"); !errors.Is(err, setting.ErrBadValue) {
		t.Errorf("entry_nodes and client_nodes: %v", err)
	}

	// a local cluster: names come from its state, without asking a server
	before := data.count("GET /_nodes/http")
	host, port, _ := strings.Cut(strings.TrimPrefix(cm.URL, "http://"), ":")
	var p int
	fmt.Sscan(port, &p)
	st := &cluster.State{Target: data.URL, Nodes: []cluster.Node{{Name: "node1", Role: "cm", Host: host, Port: p}, {Name: "node2", Role: "data"}}}
	e, _ := engine.Lookup(Elasticsearch)
	set := setting.NewSet(e.Settings()...)
	if err := set.Apply("elasticsearch.entry_nodes=node1"); err != nil {
		t.Fatal(err)
	}
	conn, err := e.Open(ctx, engine.Config{Settings: set, Cluster: st})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if n := conn.(*Conn).Nodes(); len(n) != 1 || n[0] != cm.URL || data.count("GET /_nodes/http") != before {
		t.Errorf("cluster entry nodes %v (want %s), _nodes/http asked %d times", n, cm.URL, data.count("GET /_nodes/http")-before)
	}
}

// TestUsageDelta: per node, the search requests and all REST requests
// between two _nodes/usage readings, leaving the readings themselves out.
func TestUsageDelta(t *testing.T) {
	t.Parallel()
	before := map[string]map[string]int64{"node1": {"search_action": 3, "nodes_usage_action": 1, "main_action": 1}, "node2": {"cluster_health_action": 4}}
	after := map[string]map[string]int64{"node1": {"search_action": 5003, "nodes_usage_action": 2, "nodes_info_action": 2, "main_action": 1, "bulk_action": 10},
		"node2": {"cluster_health_action": 4}, "node3": {"search_action": 2}}
	search, all := usageDelta(before, after)
	if search != "node1=5000,node2=0,node3=2" || all != "node1=5010,node2=0,node3=2" {
		t.Errorf("search %q all %q", search, all)
	}
}

// TestCheckPlan: before a run creates anything, entry node names the local
// cluster lacks and entry_nodes beside client_nodes are usage errors.
func TestCheckPlan(t *testing.T) {
	t.Parallel()
	e, _ := engine.Lookup(Elasticsearch)
	st := &cluster.State{Nodes: []cluster.Node{{Name: "node1", Host: "127.0.0.1", Port: 9200}, {Name: "node2", Host: "127.0.0.1", Port: 9201}}}
	check := func(cl *cluster.State, assignments ...string) error {
		set := setting.NewSet(e.Settings()...)
		for _, a := range assignments {
			if err := set.Apply(a); err != nil {
				t.Fatal(err)
			}
		}
		return e.(engine.PlanChecker).CheckPlan(set, cl)
	}
	if err := check(st, "elasticsearch.entry_nodes=node1"); err != nil {
		t.Errorf("node1 of the cluster: %v", err)
	}
	if err := check(st, "elasticsearch.entry_nodes=node3"); !errors.Is(err, setting.ErrBadValue) || !strings.Contains(err.Error(), "node1, node2") {
		t.Errorf("node3 of a 2-node cluster: %v", err)
	}
	if err := check(nil, "elasticsearch.entry_nodes=node3"); err != nil {
		t.Errorf("with --target the names are the server's, checked at open: %v", err)
	}
	if err := check(nil, "elasticsearch.entry_nodes=node1", "elasticsearch.client_nodes=1"); !errors.Is(err, setting.ErrBadValue) {
		t.Errorf("entry_nodes and client_nodes: %v", err)
	}
}
