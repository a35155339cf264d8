package logs

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	"github.com/scalelab/scalelab/setting"
)

// Cassandra runs the conformance suite on a 3-node ring with replication
// factor 3 (the default on 3 nodes) at QUORUM, started once by the test
// binary; each test gets its own keyspace. The default variant covers the
// SAI indexes (logs.indexes=on) and, reopened with indexes off, the query
// tables; the allow_filtering variant covers the ALLOW FILTERING scans.
func init() {
	testEngines[cassandra.Name] = &testEngine{
		open:     openCassandraTest,
		exec:     execCassandra,
		lags:     func(set *setting.Set) bool { return false },
		variants: [][]string{{"cassandra.allow_filtering=true", "cassandra.batch_size=7"}},
	}
}

// casTestNodes is the size of the ring the package's Cassandra tests share.
const casTestNodes = 3

func openCassandraTest(t *testing.T, set *setting.Set) engine.Conn {
	t.Helper()
	cassandratest.Require(t)
	st, err := cassandratest.Shared(casTestNodes)
	if err != nil {
		t.Fatal(err)
	}
	ks := cassandratest.Keyspace()
	if err := set.Apply(cassandra.KeyKeyspace + "=" + ks); err != nil {
		t.Fatal(err)
	}
	e, _ := engine.Lookup(cassandra.Name)
	c, err := e.Open(context.Background(), engine.Config{Settings: set, Cluster: st})
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-registered first: the suite closes c before this
	// one runs, so the keyspace is dropped through a connection of its own.
	t.Cleanup(func() { dropKeyspace(t, st, ks) })
	return c
}

// dropKeyspace drops a test's keyspace.
func dropKeyspace(t *testing.T, st *cluster.State, ks string) {
	pw, err := st.Password()
	if err != nil {
		t.Error(err)
		return
	}
	hosts, _ := cassandra.ParseTarget(st.Target)
	c, err := cassandra.Dial(context.Background(), hosts, cassandra.Options{User: st.User, Timeout: time.Minute, Conns: 1,
		ReadConsistency: gocql.Quorum, WriteConsistency: gocql.Quorum, Keyspace: ks}, pw)
	if err != nil {
		t.Errorf("drop keyspace %s: %v", ks, err)
		return
	}
	defer c.Close()
	if err := c.Session().Query("DROP KEYSPACE IF EXISTS " + ks).Exec(); err != nil {
		t.Errorf("drop keyspace %s: %v", ks, err)
	}
}

var casUpdate = regexp.MustCompile(`^UPDATE logs SET (\w+) = '([^']*)' WHERE id = (\d+)$`)

// execCassandra runs the suite's SQL statements as CQL on the keyspace's
// logs table at consistency ALL; a changed message changes its words too.
func execCassandra(t *testing.T, c engine.Conn, stmts ...string) {
	t.Helper()
	cc := c.(*cassandra.Conn)
	for _, s := range stmts {
		q := strings.Replace(s, " logs ", " "+cc.Table("logs")+" ", 1)
		if m := casUpdate.FindStringSubmatch(s); m != nil && m[1] == "message" {
			q = fmt.Sprintf("UPDATE %s SET message = '%s', words = {'%s'} WHERE id = %s", cc.Table("logs"), m[2],
				strings.Join(messageWords(m[2]), "','"), m[3])
		}
		if err := cc.Session().Query(q).Consistency(gocql.All).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestCassandraRing checks what a run on the shared ring records: 3
// nodes, replication factor 3, QUORUM reads and writes, Cassandra 5.0,
// and that reads at QUORUM see every acknowledged write.
func TestCassandraRing(t *testing.T) {
	t.Parallel()
	e := openEnv(t, cassandra.Name)
	info, err := e.conn.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"nodes": "3", "read_consistency": "QUORUM", "write_consistency": "QUORUM"}
	for k, v := range want {
		if info.Extra[k] != v {
			t.Errorf("info %s = %q, want %q (%v)", k, info.Extra[k], v, info.Extra)
		}
	}
	if !strings.HasPrefix(info.Extra["replication"], "3") || !strings.HasPrefix(info.Version, "5.0") {
		t.Errorf("info: replication %q, version %q", info.Extra["replication"], info.Version)
	}
	if !e.conn.(*cassandra.Conn).Strong() {
		t.Error("QUORUM/QUORUM at RF 3 is not strong")
	}
}
