package searchtest_test

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/recordstest"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/engine/search/searchtest"
)

// TestRecords runs the records conformance suite on each distribution's
// shared test node.
func TestRecords(t *testing.T) {
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		t.Run(name, func(t *testing.T) {
			searchtest.Require(t, name)
			target, err := searchtest.Shared(name)
			if err != nil {
				t.Fatal(err)
			}
			e, err := engine.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := e.Open(context.Background(), engine.Config{Target: target})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			recordstest.Run(t, func(t testing.TB, spec engine.CollectionSpec) engine.Collection {
				col, err := conn.(engine.Records).Collection(context.Background(), spec)
				if err != nil {
					t.Fatal(err)
				}
				return col
			})
		})
	}
}
