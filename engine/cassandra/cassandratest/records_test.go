package cassandratest_test

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	"github.com/scalelab/scalelab/engine/recordstest"
)

// TestRecords runs the records conformance suite in a keyspace of its own
// on the shared 1-node test ring.
func TestRecords(t *testing.T) {
	cassandratest.Require(t)
	cassandratest.UseShared(1)
	e, err := engine.Lookup(cassandra.Name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base, err := e.Open(ctx, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	conn, err := base.(*cassandra.Conn).WithKeyspace(ctx, cassandratest.Keyspace())
	if err != nil {
		t.Fatal(err)
	}
	recordstest.Run(t, func(t testing.TB, spec engine.CollectionSpec) engine.Collection {
		col, err := conn.Collection(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return col
	})
}
