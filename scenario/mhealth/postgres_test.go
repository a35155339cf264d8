package mhealth

import (
	"testing"

	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/postgres/pgtest"
)

// TestMain starts the PostgreSQL cluster the package's tests share (a
// primary and one streaming replica, a fresh database per test through the
// postgres test provider).
func TestMain(m *testing.M) { pgtest.Main(m, 1, func(*pgtest.Cluster) {}) }

// TestConformancePostgres runs the suite with reads on the primary, and
// with reads on the replica: the read-your-writes window sends a patient's
// reads after its own write to the primary, so no read is stale.
func TestConformancePostgres(t *testing.T) {
	t.Parallel()
	conformanceVariants(t, postgres.Name, variant{"primary", nil}, variant{"replicas", []string{postgres.KeyReadFrom + "=replicas"}})
}
