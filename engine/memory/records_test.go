package memory

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/recordstest"
)

func TestRecords(t *testing.T) {
	c := New(Faults{})
	recordstest.Run(t, func(t testing.TB, spec engine.CollectionSpec) engine.Collection {
		col, err := c.Collection(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		return col
	})
}
