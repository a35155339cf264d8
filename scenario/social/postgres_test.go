package social

import (
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/postgres/pgtest"
)

// pg is the PostgreSQL primary the package's tests share, a fresh
// database per test. TestMain (main_test.go)
// starts it.
var pg *pgtest.Cluster

func init() {
	servers[postgres.Name] = func(t testing.TB, cfg engine.Config) engine.Config {
		cfg.Target, cfg.Cluster = pg.NewDatabase(t), pg.State
		return cfg
	}
}

// TestConformancePostgres runs the suite with reads on the primary. (With
// postgres.read_from=replicas, a read may miss a user inserted a moment
// before; the suite's exact read-backs would then fail by design.)
func TestConformancePostgres(t *testing.T) {
	t.Parallel()
	conformance(t, postgres.Name)
}
