package records

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/setting"
)

// TestDeletedIDNotReused: a sign-up after the newest account was deleted
// gets a new id, so that nobody inherits a deleted user's id (and a
// provider's check after the deletion finds nobody there).
func TestDeletedIDNotReused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := &sqlite.Engine{}
	conn, err := e.Open(ctx, engine.Config{Dir: t.TempDir(), Settings: setting.NewSet(e.Settings()...)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st := &store{db: &sqliteDB{c: conn.(*sqlite.Conn), db: conn.(*sqlite.Conn).DB()}}
	if err := st.db.schema(ctx, schemaStmts("sqlite", "text", true)); err != nil {
		t.Fatal(err)
	}
	first, err := st.signUp(ctx, User{Role: RolePatient, Name: "A", Email: "a@x", PwHash: "h"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.deleteAccount(ctx, first); err != nil {
		t.Fatal(err)
	}
	second, err := st.signUp(ctx, User{Role: RolePatient, Name: "B", Email: "b@x", PwHash: "h"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Errorf("the deleted account's id %d was given again", first)
	}
	if _, err := st.userByID(ctx, nil, first); err != errNoUser {
		t.Errorf("deleted user: %v", err)
	}
}
