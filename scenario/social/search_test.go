package social

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/scenario"
)

// TestSearchRejectsUserRouting checks the clear error for settings the
// users collection cannot honour.
func TestSearchRejectsUserRouting(t *testing.T) {
	t.Parallel()
	name := search.OpenSearch
	e := openEngine(t, name, name+".routing=user")
	_, err := (&Scenario{}).Open(context.Background(), scenario.Env{Engine: name, Conn: e.Conn, Settings: e.Settings, Seed: 1})
	if err == nil {
		t.Fatal("routing=user accepted")
	}
	t.Log(err)
}
