package social

import (
	"context"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
)

// casTestNodes is the size of the ring the package's Cassandra tests
// share: 3 nodes, replication factor 3, reads and writes at QUORUM. The
// ring starts on first use and stops when the test binary exits; each test
// gets its own keyspace.
const casTestNodes = 3

func init() {
	servers[cassandra.Name] = func(t testing.TB, cfg engine.Config) engine.Config {
		cassandratest.Require(t)
		st, err := cassandratest.Shared(casTestNodes)
		if err != nil {
			t.Fatal(err)
		}
		ks := cassandratest.Keyspace()
		for _, a := range []string{cassandra.KeyKeyspace + "=" + ks, cassandra.KeyReplication + "=3"} {
			if err := cfg.Settings.Apply(a); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { dropKeyspace(t, cfg, ks) })
		cfg.Cluster = st
		return cfg
	}
}

// dropKeyspace removes a test's keyspace with a connection of its own.
func dropKeyspace(t testing.TB, cfg engine.Config, ks string) {
	e, _ := engine.Lookup(cassandra.Name)
	c, err := e.Open(context.Background(), cfg)
	if err != nil {
		t.Errorf("drop keyspace %s: %v", ks, err)
		return
	}
	defer c.Close()
	if err := c.(*cassandra.Conn).Session().Query("DROP KEYSPACE IF EXISTS " + ks).Exec(); err != nil {
		t.Errorf("drop keyspace %s: %v", ks, err)
	}
}

// TestConformanceCassandra runs the suite at QUORUM on the shared 3-node
// ring with replication factor 3, and checks what run.json would record.
func TestConformanceCassandra(t *testing.T) {
	t.Parallel()
	set := []string{cassandra.KeyReadConsistency + "=QUORUM", cassandra.KeyWriteConsistency + "=QUORUM", cassandra.KeyBatchSize + "=20"}
	conformanceSized(t, cassandra.Name, suite{users: 600, ops: 120}, set...)

	e := openEngine(t, cassandra.Name, set...)
	info, err := e.conn.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"nodes": "3", "read_consistency": "QUORUM", "write_consistency": "QUORUM"} {
		if info.Extra[k] != v {
			t.Errorf("info %s = %q, want %q (%v)", k, info.Extra[k], v, info.Extra)
		}
	}
	if !strings.HasPrefix(info.Extra["replication"], "3") || !strings.HasPrefix(info.Version, "5.0") {
		t.Errorf("info: replication %q, version %q", info.Extra["replication"], info.Version)
	}
}
