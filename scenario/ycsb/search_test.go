package ycsb

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine/search/searchtest"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// TestSearchRejectsUserRouting checks the clear error for settings ycsb
// cannot honour.
func TestSearchRejectsUserRouting(t *testing.T) {
	t.Parallel()
	scenariotest.EachSearchEngine(t, func(t *testing.T, name string) {
		searchtest.Require(t, name)
		e := openEngine(t, name, name+".routing=user")
		_, err := (&Scenario{}).Open(context.Background(), scenario.Env{Engine: name, Conn: e.Conn, Settings: e.Settings, Seed: 1})
		if err == nil {
			t.Fatal("routing=user accepted")
		}
	})
}
