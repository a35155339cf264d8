package ycsb

import (
	"context"
	"sync"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	"github.com/scalelab/scalelab/scenario"
)

// Cassandra runs the conformance suite on a 1-node ring the test binary
// starts on first use (the engine opens it when no target is given) and
// that stops when the binary exits. Tests run in parallel: each opening of
// the storage gets a keyspace of its own.
func init() {
	cassandratest.UseShared(1)
	open := openers[cassandra.Name]
	openers[cassandra.Name] = func(ctx context.Context, env scenario.Env, cfg *config) (store, error) {
		base := env.Conn.(*cassandra.Conn)
		if v, ok := casKeyspaces.Load(base); ok { // reopened (ycsb.load=false): the same data
			env.Conn = v.(*cassandra.Conn)
			return open(ctx, env, cfg)
		}
		c, err := base.WithKeyspace(ctx, cassandratest.Keyspace())
		if err != nil {
			return nil, err
		}
		casKeyspaces.Store(base, c)
		env.Conn = c
		return open(ctx, env, cfg)
	}
	corrupters[cassandra.Name] = func(t *testing.T, c engine.Conn, key string) {
		v, ok := casKeyspaces.Load(c.(*cassandra.Conn))
		if !ok {
			t.Fatal("no ycsb storage opened on this connection")
		}
		cc := v.(*cassandra.Conn)
		q := "UPDATE " + cc.Table("usertable") + " SET field0 = ? WHERE b = ? AND y_id = ?"
		if err := cc.Session().Query(q, []byte("garbage"), bucket([]byte(key)), key).Consistency(gocql.All).ExecContext(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// casKeyspaces maps an engine connection to the keyspace-bound connection
// of its storage (where reopened storage reads and the corrupter writes).
var casKeyspaces sync.Map

// TestCassandraInstalled fails under CI when the cassandra engine cannot
// run: the conformance suite would then fail to open it.
func TestCassandraInstalled(t *testing.T) {
	t.Parallel()
	cassandratest.Require(t)
}
