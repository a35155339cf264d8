package mongotest_test

import (
	"testing"

	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/engine/mongodb/mongotest"
	"github.com/scalelab/scalelab/engine/recordstest"
)

func TestMain(m *testing.M) { enginetest.Main(m) }

// TestRecords runs the records conformance suite on a fresh database of
// the shared FerretDB server.
func TestRecords(t *testing.T) {
	recordstest.RunConn(t, mongotest.Open(t, enginetest.Settings(t, mongodb.Name, nil)))
}
