package memcachedtest_test

import (
	"testing"

	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/memcached"
	"github.com/scalelab/scalelab/engine/memcached/memcachedtest"
	"github.com/scalelab/scalelab/engine/recordstest"
)

func TestMain(m *testing.M) { enginetest.Main(m) }

// TestRecords runs the records conformance suite, what memcached's traits
// allow of it (no scans, counts or highest key), under a namespace of its
// own on the shared memcached server.
func TestRecords(t *testing.T) {
	recordstest.RunConn(t, memcachedtest.Open(t, enginetest.Settings(t, memcached.Name, nil)))
}
