package pgtest_test

import (
	"testing"

	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/postgres/pgtest"
	"github.com/scalelab/scalelab/engine/recordstest"
)

func TestMain(m *testing.M) { pgtest.Main(m, 0, func(*pgtest.Cluster) {}) }

// TestRecords runs the records conformance suite on a fresh database of
// the provider's cluster.
func TestRecords(t *testing.T) {
	p, _ := enginetest.Lookup(postgres.Name)
	recordstest.RunConn(t, p.Open(t, enginetest.Settings(t, postgres.Name, nil)))
}
