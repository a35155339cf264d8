package recordstest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine"
)

// Owned is what Ownership checks on one engine: a user's object of the
// name a collection uses, planted in a namespace with its data, and
// connections to that namespace and to another.
type Owned struct {
	// Engine is the engine's name (its replace_existing setting).
	Engine string
	// Name is the collection's name; Object is how the refusal names the
	// store's object (keyspace.usertable, an index, keys under a prefix).
	Name, Object string
	// Plant makes a user's object of Name, with data, in the namespace.
	Plant func(t testing.TB)
	// Intact reports whether the user's data is still there.
	Intact func(t testing.TB) bool
	// Open connects to the namespace with the settings applied
	// ("<engine>.replace_existing=true").
	Open func(t testing.TB, settings ...string) engine.Records
	// Other connects to another namespace of the same store.
	Other func(t testing.TB) engine.Records
}

// Ownership checks, against a real store, that a collection of the name
// of a user's object that scalelab did not create is refused, loaded or
// not, with an error naming it (errors.Is engine.ErrNotOwned and
// engine.ErrConfig) and the user's data intact; that another namespace
// proceeds, and a collection scalelab created there is reused and
// recreated by a second run; and that with <engine>.replace_existing the
// run proceeds, the object then being scalelab's.
func Ownership(t *testing.T, o Owned) {
	ctx := context.Background()
	fields := []string{"fa", "fb", "fc"}
	o.Plant(t)
	mine := o.Open(t)
	for _, recreate := range []bool{true, false} {
		c, err := mine.Collection(ctx, engine.CollectionSpec{Name: o.Name, Fields: fields, Recreate: recreate})
		if err == nil {
			c.Close()
			t.Fatalf("collection %s (recreate %v) over a user's %s: no error", o.Name, recreate, o.Object)
		}
		if !errors.Is(err, engine.ErrNotOwned) || !errors.Is(err, engine.ErrConfig) ||
			!strings.Contains(err.Error(), o.Object) || !strings.Contains(err.Error(), o.Engine+"."+engine.ReplaceExistingKey) {
			t.Fatalf("collection %s (recreate %v): %v; want a NotOwnedError naming %s and %s.%s", o.Name, recreate, err, o.Object, o.Engine, engine.ReplaceExistingKey)
		}
		t.Logf("refused (recreate %v): %v", recreate, err)
		if !o.Intact(t) {
			t.Fatalf("the user's %s lost its data after a refused run", o.Object)
		}
	}

	other := o.Other(t)
	col := OpenCollection(t, other, o.Name, fields, true)
	if err := col.Insert(ctx, []byte("k1"), Vals3("1")); err != nil {
		t.Fatal(err)
	}
	OpenCollection(t, other, o.Name, fields, false) // a second run reuses it
	again := OpenCollection(t, other, o.Name, fields, true)
	var rows engine.Rows
	rows.Reset(len(fields))
	if err := again.Get(ctx, []byte("k1"), engine.AllFields, &rows); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("get k1 after a second run recreated the collection scalelab made: %v, want ErrNotFound", err)
	}
	if !o.Intact(t) {
		t.Fatalf("a run in another namespace touched the user's %s", o.Object)
	}

	replacing := o.Open(t, o.Engine+"."+engine.ReplaceExistingKey+"=true")
	col = OpenCollection(t, replacing, o.Name, fields, true)
	if err := col.Insert(ctx, []byte("k1"), Vals3("1")); err != nil {
		t.Fatal(err)
	}
	OpenCollection(t, o.Open(t), o.Name, fields, true) // replaced: now scalelab's
}
