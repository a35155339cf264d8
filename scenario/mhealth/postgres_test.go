package mhealth

import (
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/postgres/pgtest"
)

// pg is the cluster the package's tests share: a primary and one streaming
// replica, a fresh database per test.
var pg *pgtest.Cluster

func TestMain(m *testing.M) { pgtest.Main(m, 1, func(c *pgtest.Cluster) { pg = c }) }

func init() {
	servers[postgres.Name] = func(t *testing.T, cfg engine.Config) engine.Config {
		cfg.Target, cfg.Cluster = pg.NewDatabase(t), pg.State
		return cfg
	}
}

// TestConformancePostgres runs the suite with reads on the primary, and
// with reads on the replica: the read-your-writes window sends a patient's
// reads after its own write to the primary, so no read is stale.
func TestConformancePostgres(t *testing.T) {
	t.Parallel()
	t.Run("primary", func(t *testing.T) { t.Parallel(); conformance(t, postgres.Name) })
	t.Run("replicas", func(t *testing.T) {
		t.Parallel()
		conformance(t, postgres.Name, postgres.KeyReadFrom+"=replicas")
	})
}
