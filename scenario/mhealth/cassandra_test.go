package mhealth

import (
	"testing"

	"github.com/scalelab/scalelab/engine/cassandra"
)

// TestConformanceCassandra runs the suite at the default QUORUM, and with
// ONE for reads and ALL for writes (which also read their writes).
func TestConformanceCassandra(t *testing.T) {
	t.Parallel()
	conformanceVariants(t, cassandra.Name, variant{"quorum", nil},
		variant{"one-all", []string{cassandra.KeyReadConsistency + "=ONE", cassandra.KeyWriteConsistency + "=ALL"}})
}
