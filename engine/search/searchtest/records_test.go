package searchtest_test

import (
	"testing"

	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/recordstest"
	"github.com/scalelab/scalelab/engine/search"
	_ "github.com/scalelab/scalelab/engine/search/searchtest"
)

// TestRecords runs the records conformance suite on each distribution, an
// index prefix of its own on the provider's shared node.
func TestRecords(t *testing.T) {
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		t.Run(name, func(t *testing.T) {
			p, _ := enginetest.Lookup(name)
			recordstest.RunConn(t, p.Open(t, enginetest.Settings(t, name, nil)))
		})
	}
}
