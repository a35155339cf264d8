package redistest_test

import (
	"testing"

	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/recordstest"
	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/engine/redis/redistest"
)

func TestMain(m *testing.M) { enginetest.Main(m) }

// TestRecords runs the records conformance suite under a key prefix of
// its own on the shared Redis server.
func TestRecords(t *testing.T) {
	recordstest.RunConn(t, redistest.Open(t, enginetest.Settings(t, redis.Name, nil)))
}
