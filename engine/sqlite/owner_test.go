package sqlite_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/sqlite"
)

// userTable makes a table usertable of the user's, holding one row, in
// the file at path.
func userTable(t *testing.T, path string) {
	t.Helper()
	c := open(t, path)
	if _, err := c.DB().ExecContext(ctx, "CREATE TABLE usertable (id TEXT PRIMARY KEY, note TEXT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DB().ExecContext(ctx, "INSERT INTO usertable VALUES ('k1', 'the user''s row')"); err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// userRow reads back the user's row ("" when it is gone).
func userRow(t *testing.T, path string) string {
	t.Helper()
	c := open(t, path)
	defer c.Close()
	var note string
	_ = c.DB().QueryRowContext(ctx, "SELECT note FROM usertable WHERE id = 'k1'").Scan(&note)
	return note
}

func TestOwnership(t *testing.T) {
	t.Parallel()
	spec := engine.CollectionSpec{Name: "usertable", Fields: []string{"field0"}, Recreate: true}

	t.Run("a user's table is refused and kept", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "user.db")
		userTable(t, path)
		c := open(t, path)
		_, err := c.Collection(ctx, spec)
		var ne *engine.NotOwnedError
		if !errors.Is(err, engine.ErrNotOwned) || !errors.Is(err, engine.ErrConfig) || !errors.As(err, &ne) {
			t.Fatalf("Collection over a user's table: %v, want a NotOwnedError", err)
		}
		for _, want := range []string{"usertable in " + path, "sqlite.replace_existing=true", "another target"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q does not say %q", err, want)
			}
		}
		c.Close()
		if got := userRow(t, path); got != "the user's row" {
			t.Errorf("the user's row after the refusal: %q", got)
		}
		// A view of the name is not scalelab's either.
		v := filepath.Join(t.TempDir(), "view.db")
		cv := open(t, v)
		if _, err := cv.DB().ExecContext(ctx, "CREATE VIEW usertable AS SELECT 1 AS id"); err != nil {
			t.Fatal(err)
		}
		if _, err := cv.Collection(ctx, spec); !errors.Is(err, engine.ErrNotOwned) || !strings.Contains(err.Error(), "view usertable") {
			t.Errorf("Collection over a user's view: %v", err)
		}
	})

	t.Run("replace_existing replaces it", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "user.db")
		userTable(t, path)
		c := open(t, path, sqlite.KeyReplaceExisting+"=true")
		col, err := c.Collection(ctx, spec)
		if err != nil {
			t.Fatalf("with replace_existing: %v", err)
		}
		if n, err := col.Count(ctx); err != nil || n != 0 {
			t.Errorf("replaced table holds %d rows (%v)", n, err)
		}
		col.Close()
		var mark string
		if err := c.DB().QueryRowContext(ctx, "SELECT mark FROM "+sqlite.RegistryTable+" WHERE name = 'usertable'").Scan(&mark); err != nil || !engine.IsMark(mark) {
			t.Errorf("the replaced table is not marked: %q (%v)", mark, err)
		}
	})

	t.Run("a table scalelab created is reused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ours.db")
		for i, recreate := range []bool{true, false, true} {
			c := open(t, path)
			s := spec
			s.Recreate = recreate
			col, err := c.Collection(ctx, s)
			if err != nil {
				t.Fatalf("run %d over scalelab's own table: %v", i+1, err)
			}
			if i == 0 {
				if err := col.Insert(ctx, []byte("k"), [][]byte{[]byte("v")}); err != nil {
					t.Fatal(err)
				}
			}
			if n, _ := col.Count(ctx); i == 1 && n != 1 {
				t.Errorf("run without recreate sees %d rows, want the earlier run's 1", n)
			}
			col.Close()
			c.Close()
		}
	})
}
