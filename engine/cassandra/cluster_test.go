package cassandra_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

// TestCluster starts a real 3-node ring and checks it end to end: every
// node UN in status, authentication (the generated superuser in a 0600
// file, the default login gone, the password nowhere else), the engine on
// it (version, node count, replication factor 3, QUORUM), bulk writes,
// reads and an SAI index, one node stopped and restarted from its
// recorded command, and that stopping the ring leaves no JVM and no port.
func TestCluster(t *testing.T) {
	cassandratest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	st := cassandratest.Start(t, cluster.Spec{Nodes: 3})
	t.Logf("3-node ring up in %s s", st.Params["up_seconds"])
	if len(st.Nodes) != 3 || st.User != cassandra.User || st.Params["version"] == "" {
		t.Fatalf("state: %d nodes, user %q, params %v", len(st.Nodes), st.User, st.Params)
	}
	for i, n := range st.Nodes {
		if want := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}[i]; n.Host != want || len(n.Cmd) == 0 {
			t.Errorf("%s on %s (want %s), cmd %d args", n.Name, n.Host, want, len(n.Cmd))
		}
	}
	prov := &cassandra.Provisioner{}
	checkStates(ctx, t, prov, st, "UN", "UN", "UN")

	// Authentication.
	fi, err := os.Stat(st.SecretFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file %s: %v, mode %v", st.SecretFile, err, fi.Mode())
	}
	pw, err := st.Password()
	if err != nil || len(pw) < 16 {
		t.Fatalf("password: %d chars, %v", len(pw), err)
	}
	for _, n := range st.Nodes {
		if b, err := os.ReadFile(n.LogFile); err != nil || strings.Contains(string(b), pw) {
			t.Errorf("%s log: has the password or unreadable (%v)", n.Name, err)
		}
		if strings.Contains(strings.Join(n.Cmd, " "), pw) {
			t.Errorf("%s command holds the password", n.Name)
		}
	}
	hosts, err := cassandra.ParseTarget(st.Target)
	if err != nil {
		t.Fatal(err)
	}
	opts, _ := cassandra.OptionsFrom(nil)
	for _, login := range [][2]string{{"cassandra", "cassandra"}, {cassandra.User, "wrong-password"}} {
		o := opts
		o.User = login[0]
		if c, err := cassandra.Dial(ctx, hosts, o, login[1]); err == nil {
			c.Close()
			t.Errorf("login %s with a wrong or default password accepted", login[0])
		} else if login[1] != login[0] && strings.Contains(err.Error(), login[1]) {
			t.Errorf("login error quotes the password: %v", err)
		}
	}

	// The engine on the ring.
	e := &cassandra.Engine{}
	set := setting.NewSet(e.Settings()...)
	if err := set.Apply(cassandra.KeyKeyspace + "=clustertest"); err != nil {
		t.Fatal(err)
	}
	ec, err := e.Open(ctx, engine.Config{Cluster: st, Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	c := ec.(*cassandra.Conn)
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Version, "5.0.") || info.Extra["nodes"] != "3" || !strings.HasPrefix(info.Extra["replication"], "3") ||
		info.Extra["read_consistency"] != "QUORUM" || info.Extra["write_consistency"] != "QUORUM" || strings.Contains(info.Target+strings.Join(mapValues(info.Extra), " "), pw) {
		t.Errorf("info %+v", info)
	}
	if err := c.CreateTable(ctx, "kv", "k bigint PRIMARY KEY, grp int, v text"); err != nil {
		t.Fatal(err)
	}
	const rows = 500
	batch := make([][]any, rows)
	for i := range batch {
		batch[i] = []any{int64(i), i % 10, strings.Repeat("x", i%50)}
	}
	statsAround(ctx, t, c, 3, func() {
		if err := c.WriteBatch(ctx, "INSERT INTO "+c.Table("kv")+" (k, grp, v) VALUES (?, ?, ?)", batch); err != nil {
			t.Fatal(err)
		}
	})
	if err := c.CreateIndex(ctx, "kv", "grp"); err != nil {
		t.Fatal(err)
	}
	countGrp := func() (int64, error) {
		var n int64
		err := c.Read("SELECT count(*) FROM "+c.Table("kv")+" WHERE grp = ?", 3).ScanContext(ctx, &n)
		return n, err
	}
	if n, err := countGrp(); err != nil || n != rows/10 {
		t.Fatalf("count by index: %d, %v; want %d", n, err, rows/10)
	}
	var v string
	if err := c.Read("SELECT v FROM "+c.Table("kv")+" WHERE k = ?", int64(49)).ScanContext(ctx, &v); err != nil || v != strings.Repeat("x", 49) {
		t.Fatalf("read: %q, %v", v, err)
	}
	set2 := setting.NewSet(e.Settings()...)
	_ = set2.Apply(cassandra.KeyReplication + "=4")
	if _, err := e.Open(ctx, engine.Config{Cluster: st, Settings: set2}); !errors.Is(err, setting.ErrBadValue) {
		t.Errorf("replication 4 on 3 nodes: %v", err)
	}

	// One node down: QUORUM still answers; ALL is unavailable (rejected).
	n3 := st.Nodes[2]
	if err := cluster.Stop(n3.PID, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	checkStates(ctx, t, prov, st, "UN", "UN", "DN")
	if n, err := countGrp(); err != nil || n != rows/10 {
		t.Errorf("QUORUM count with a node down: %d, %v", n, err)
	}
	err = c.Session().Query("SELECT v FROM "+c.Table("kv")+" WHERE k = 1").Consistency(gocql.All).ScanContext(ctx, &v)
	if metrics.ClassOf(c.Classify(ctx, err)) != metrics.Rejected {
		t.Errorf("read at ALL with a node down: %v (class %v), want rejected", err, metrics.ClassOf(c.Classify(ctx, err)))
	}
	// Restarted from its recorded command, it rejoins.
	pid, err := cluster.Start(n3.Cmd, n3.DataDir, n3.LogFile, n3.Env)
	if err != nil {
		t.Fatal(err)
	}
	st.Nodes[2].PID = pid
	err = cluster.WaitFor(ctx, "node3 up again", time.Second, func() bool {
		ns, err := prov.Status(ctx, st)
		return err == nil && ns[2].Detail["state"] == "UN"
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cassandratest.Stop(st); err != nil {
		t.Fatal(err)
	}
	for _, n := range st.Nodes {
		if cluster.Alive(n.PID) {
			t.Errorf("%s pid %d alive after stop", n.Name, n.PID)
		}
	}
}

// checkStates waits (a node's state spreads by gossip in seconds) until
// status shows the wanted states, then checks pid and load.
func checkStates(ctx context.Context, t *testing.T, prov *cassandra.Provisioner, st *cluster.State, want ...string) {
	t.Helper()
	var ns []cluster.NodeStatus
	err := cluster.WaitFor(ctx, "states "+strings.Join(want, ","), time.Second, func() bool {
		var err error
		if ns, err = prov.Status(ctx, st); err != nil {
			return false
		}
		for i, n := range ns {
			if n.Detail["state"] != want[i] {
				return false
			}
		}
		return true
	}, nil)
	if err != nil {
		t.Fatalf("%v: %+v", err, ns)
	}
	for i, n := range ns {
		if want[i] == "UN" && (!n.Alive || n.PID <= 0 || n.Detail["load"] == "") {
			t.Errorf("%s: alive %t, pid %d, load %q", n.Name, n.Alive, n.PID, n.Detail["load"])
		}
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
