package cassandratest_test

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	_ "github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/recordstest"
)

// TestRecords runs the records conformance suite in a keyspace of its own
// on the shared 1-node test ring.
func TestRecords(t *testing.T) {
	ctx := context.Background()
	p, _ := enginetest.Lookup(cassandra.Name)
	conn := p.Open(t, enginetest.Settings(t, cassandra.Name, nil)).(*cassandra.Conn)
	recordstest.Run(t, func(t testing.TB, spec engine.CollectionSpec) engine.Collection {
		col, err := conn.Collection(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return col
	})
}
