package social

import (
	"testing"

	"github.com/scalelab/scalelab/engine/postgres/pgtest"
)

// TestMain starts the servers the package's tests share: a PostgreSQL
// primary (pgtest). The search engines' nodes
// start on first use (searchtest).
func TestMain(m *testing.M) { pgtest.Main(m, 0, func(c *pgtest.Cluster) { pg = c }) }
