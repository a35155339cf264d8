package pgtest_test

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/postgres/pgtest"
	"github.com/scalelab/scalelab/engine/recordstest"
)

var pg *pgtest.Cluster

func TestMain(m *testing.M) { pgtest.Main(m, 0, func(c *pgtest.Cluster) { pg = c }) }

// TestRecords runs the records conformance suite on a fresh database.
func TestRecords(t *testing.T) {
	e, err := engine.Lookup(postgres.Name)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := e.Open(context.Background(), engine.Config{Target: pg.NewDatabase(t), Cluster: pg.State})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	recordstest.Run(t, func(t testing.TB, spec engine.CollectionSpec) engine.Collection {
		col, err := conn.(engine.Records).Collection(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		return col
	})
}
