package all_test

import (
	"slices"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	_ "github.com/scalelab/scalelab/engine/enginetest/all"
	"github.com/scalelab/scalelab/engine/null"
	"github.com/scalelab/scalelab/engine/recordstest"
)

func TestMain(m *testing.M) { enginetest.Main(m) }

// TestRecords runs the records conformance suite on a fresh store of each
// test provider whose engine has records (a database, keyspace, index or
// key prefix of its own on the server the test binary shares), but null,
// which stores nothing; memcached, which has no provider, runs it from its
// own tests.
func TestRecords(t *testing.T) {
	withRecords := engine.WithRecords()
	for _, p := range enginetest.Providers() {
		if !slices.Contains(withRecords, p.Engine) || p.Engine == null.Name {
			continue
		}
		t.Run(p.Engine, func(t *testing.T) {
			recordstest.RunConn(t, p.Open(t, enginetest.Settings(t, p.Engine, nil)))
		})
	}
}
