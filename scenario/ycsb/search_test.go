package ycsb

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/engine/search/searchtest"
	"github.com/scalelab/scalelab/scenario"
)

// TestSearchRejectsUserRouting checks the clear error for settings ycsb
// cannot honour.
func TestSearchRejectsUserRouting(t *testing.T) {
	t.Parallel()
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			searchtest.Require(t, name)
			e := openEngine(t, name, name+".routing=user")
			_, err := (&Scenario{}).Open(context.Background(), scenario.Env{Engine: name, Conn: e.Conn, Settings: e.Settings, Seed: 1})
			if err == nil {
				t.Fatal("routing=user accepted")
			}
		})
	}
}
