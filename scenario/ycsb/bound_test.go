package ycsb

import (
	"testing"

	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// TestStoreBound: on embedded SQLite the operations are held to its
// statements; behind a local cache, or on the memory engine, they are not.
func TestStoreBound(t *testing.T) {
	t.Parallel()
	scenariotest.StoreBound(t, &Scenario{}, KeyRecords+"=100")
}
