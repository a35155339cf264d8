package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/scalelab/scalelab/engine/recordstest"
)

func TestRecords(t *testing.T) {
	ctx := context.Background()
	c, err := OpenFile(ctx, filepath.Join(t.TempDir(), "records.db"), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	recordstest.RunConn(t, c)
}
