package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/engine/postgres"
)

// TestAppTierInNamespaces: two app servers of records started with
// --netns, each in its own network namespace with a 1 ms link, reaching a
// PostgreSQL on loopback through proxies on their bridge, HAProxy on the
// host in front of them; app2 partitioned for 4 s during a phases run:
// the balancer marks it down and up again, the run completes, nothing
// acknowledged is lost, and `cluster down` leaves no namespace behind.
func TestAppTierInNamespaces(t *testing.T) {
	needNetns(t, "PostgreSQL and HAProxy", func() error {
		if _, err := postgres.BinDir(); err != nil {
			return err
		}
		_, err := apptier.HAProxyPath()
		return err
	}, "apt-get install postgresql haproxy")
	ctx := context.Background()
	upCluster(t, "postgres", "pgns")
	st, _ := upLoadedCluster(t, "app", "webns", "--scenario", "records", "--servers", "2", "--cluster", "pgns",
		"--netns", "--link", "delay=1ms", "--set", "records.bcrypt_cost=4", "--opt", "check_interval=500ms")
	if st.Net == nil || len(st.Net.Nodes) != 2 || len(st.Nodes) != 3 {
		t.Fatalf("network %+v, nodes %+v", st.Net, st.Nodes)
	}
	for _, n := range st.Nodes {
		onBridge := strings.HasPrefix(n.Host, "10.231.")
		if (n.Role == apptier.RoleServer) != onBridge {
			t.Errorf("%s (%s) at %s: servers belong on the bridge, the balancer on the host", n.Name, n.Role, n.Host)
		}
	}
	// a proxy from the balancer to each server, one from each server to
	// the store
	var toStore int
	for _, p := range st.Links.Proxies {
		if p.To == "pgns.node1" {
			toStore++
		}
	}
	if !st.Links.Proxied || len(st.Links.Proxies) != 4 || toStore != 2 {
		t.Fatalf("links' proxies %+v", st.Links.Proxies)
	}

	_, _, r := runAppRecords(t, ctx, "webns", "4s@2/s,4s@4/s,4s@6/s", "partition:app2@3s+4s")
	if len(r.Faults) != 1 || r.Faults[0].Outcome != "done" {
		t.Fatalf("faults %+v", r.Faults)
	}
	if !eventsMention(r, "app2 DOWN", "app2 UP") {
		t.Errorf("the balancer did not mark the partitioned app2 down and up again: events %+v", r.Events)
	}
	at := appTierOf(r)
	if at == nil || len(at.Servers) != 2 || at.Servers[0].Requests == 0 || at.Servers[1].Requests == 0 {
		t.Errorf("app tier in run.json: %+v", at)
	}
	if a := r.Audit; a == nil || a.Registers == nil || !a.Registers.Checked || a.Registers.Lost != 0 || a.Registers.Acknowledged == 0 {
		t.Errorf("audit %+v", a)
	}
	if r.Cluster == nil || r.Cluster.Name != "pgns" {
		t.Errorf("run.json's store cluster: %+v", r.Cluster)
	}
	downLeavesNoNamespace(t, ctx, st)
}
