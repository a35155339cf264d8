package mongodb_test

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/engine/mongodb/mongotest"
	"github.com/scalelab/scalelab/engine/recordstest"
	"github.com/scalelab/scalelab/setting"
)

// openDB connects to database db of the shared FerretDB server (the
// target names another: mongodb.database chooses) with the settings.
func openDB(t testing.TB, db string, settings ...string) *mongodb.Conn {
	t.Helper()
	set := setting.NewSet((&mongodb.Engine{}).Settings()...)
	for _, kv := range append([]string{mongodb.KeyDatabase + "=" + db}, settings...) {
		if err := set.Apply(kv); err != nil {
			t.Fatal(err)
		}
	}
	c := mongotest.Open(t, set)
	if c.Primary().Name() != db {
		t.Fatalf("database %s, want %s (mongodb.database)", c.Primary().Name(), db)
	}
	return c
}

// TestOwnership plants a user's usertable (a document in it) in a database
// and checks that a run's collection of that name is refused with the
// data intact, that another database proceeds, and that
// mongodb.replace_existing replaces it; then that a claim by prefix (as
// mhealth's) refuses a user's collection of the prefix, and accepts a
// family recorded with Own.
func TestOwnership(t *testing.T) {
	ctx := context.Background()
	db, other := enginetest.Name(), enginetest.Name()
	admin := openDB(t, db)
	users := admin.Primary().Collection("usertable")
	intact := func(t testing.TB) bool {
		n, err := users.CountDocuments(ctx, bson.D{{Key: "_id", Value: "alice"}})
		return err == nil && n == 1
	}
	recordstest.Ownership(t, recordstest.Owned{
		Engine: mongodb.Name, Name: "usertable", Object: db + ".usertable",
		Plant: func(t testing.TB) {
			if _, err := users.InsertOne(ctx, bson.D{{Key: "_id", Value: "alice"}, {Key: "v", Value: "precious"}}); err != nil {
				t.Fatal(err)
			}
		},
		Intact: intact,
		Open:   func(t testing.TB, s ...string) engine.Records { return openDB(t, db, s...) },
		Other:  func(t testing.TB) engine.Records { return openDB(t, other) },
	})

	if _, err := admin.Primary().Collection("mh_notes").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	var no *engine.NotOwnedError
	if err := admin.Claim(ctx, mongodb.Prefixed("mh_")); !errors.As(err, &no) || no.Name != db+".mh_notes" || no.Namespace != mongodb.KeyDatabase {
		t.Fatalf("claim of mh_* over a user's mh_notes: %v", err)
	}
	if err := admin.Own(ctx, "mh_activity_*"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Primary().Collection("mh_activity_7").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if got, err := admin.Unowned(ctx, mongodb.Prefixed("mh_")); err != nil || len(got) != 1 || got[0] != "mh_notes" {
		t.Fatalf("unowned mh_*: %v, %v; want only mh_notes (mh_activity_7 is of a recorded family)", got, err)
	}
}
