package ycsb

import (
	"context"
	"net/url"
	"os"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/postgres/pgtest"
)

// TestMain starts a local PostgreSQL primary for the conformance suite and
// points the engine's default target (the libpq environment: PGHOST...) at
// it, so that openEngine(t, "postgres") connects with no target.
func TestMain(m *testing.M) {
	pgtest.Main(m, 0, func(c *pgtest.Cluster) {
		u, err := url.Parse(c.State.Target)
		if err != nil {
			panic(err)
		}
		for k, v := range map[string]string{"PGHOST": u.Hostname(), "PGPORT": u.Port(), "PGUSER": u.User.Username(),
			"PGDATABASE": u.Path[1:], "PGPASSWORD": c.Password(), "PGSSLMODE": "disable"} {
			os.Setenv(k, v)
		}
	})
}

func init() {
	corrupters[postgres.Name] = func(t *testing.T, c engine.Conn, key string) {
		tag, err := c.(*postgres.Conn).Primary().Exec(context.Background(), "UPDATE usertable SET FIELD0 = 'garbage' WHERE YCSB_KEY = $1", key)
		if err != nil {
			t.Fatal(err)
		}
		if tag.RowsAffected() != 1 {
			t.Fatalf("corrupting %s updated %d rows", key, tag.RowsAffected())
		}
	}
}
