package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/recordstest"
)

func TestRecords(t *testing.T) {
	ctx := context.Background()
	c, err := OpenFile(ctx, filepath.Join(t.TempDir(), "records.db"), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	recordstest.Run(t, func(t testing.TB, spec engine.CollectionSpec) engine.Collection {
		col, err := c.Collection(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return col
	})
}
