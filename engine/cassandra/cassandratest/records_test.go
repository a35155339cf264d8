package cassandratest_test

import (
	"testing"

	"github.com/scalelab/scalelab/engine/cassandra"
	_ "github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/recordstest"
)

// TestRecords runs the records conformance suite in a keyspace of its own
// on the provider's shared 1-node ring.
func TestRecords(t *testing.T) {
	p, _ := enginetest.Lookup(cassandra.Name)
	recordstest.RunConn(t, p.Open(t, enginetest.Settings(t, cassandra.Name, nil)))
}
