package mhealth

import (
	"testing"

	"github.com/scalelab/scalelab/engine/cassandra"
)

// TestConformanceCassandra runs the suite at the default QUORUM, and with
// ONE for reads and ALL for writes (which also read their writes).
func TestConformanceCassandra(t *testing.T) {
	t.Parallel()
	t.Run("quorum", func(t *testing.T) { t.Parallel(); conformance(t, cassandra.Name) })
	t.Run("one-all", func(t *testing.T) {
		t.Parallel()
		conformance(t, cassandra.Name, cassandra.KeyReadConsistency+"=ONE", cassandra.KeyWriteConsistency+"=ALL")
	})
}
