package ycsb

import (
	"context"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
)

// Cassandra runs the conformance suite on a 1-node ring the test binary
// starts on first use (the engine opens it when no target is given) and
// that stops when the binary exits.
func init() {
	cassandratest.UseShared(1)
	corrupters[cassandra.Name] = func(t *testing.T, c engine.Conn, key string) {
		cc := c.(*cassandra.Conn)
		q := "UPDATE " + cc.Table("usertable") + " SET field0 = ? WHERE b = ? AND y_id = ?"
		if err := cc.Session().Query(q, []byte("garbage"), bucket([]byte(key)), key).Consistency(gocql.All).ExecContext(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCassandraInstalled fails under CI when the cassandra engine cannot
// run: the conformance suite would then fail to open it.
func TestCassandraInstalled(t *testing.T) {
	t.Parallel()
	cassandratest.Require(t)
}
