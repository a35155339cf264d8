package mhealth

import (
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
)

// Cassandra runs the suite on a 1-node ring the test binary starts on
// first use (it stops when the binary exits), one keyspace per test.
func init() {
	servers[cassandra.Name] = func(t *testing.T, cfg engine.Config) engine.Config {
		cassandratest.Require(t)
		st, err := cassandratest.Shared(1)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Settings.Apply(cassandra.KeyKeyspace + "=" + cassandratest.Keyspace()); err != nil {
			t.Fatal(err)
		}
		cfg.Cluster = st
		return cfg
	}
}

// TestConformanceCassandra runs the suite at the default QUORUM, and with
// ONE for reads and ALL for writes (which also read their writes).
func TestConformanceCassandra(t *testing.T) {
	t.Parallel()
	t.Run("quorum", func(t *testing.T) { t.Parallel(); conformance(t, cassandra.Name) })
	t.Run("one-all", func(t *testing.T) {
		t.Parallel()
		conformance(t, cassandra.Name, cassandra.KeyReadConsistency+"=ONE", cassandra.KeyWriteConsistency+"=ALL")
	})
}
