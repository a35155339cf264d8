package mongodb

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/scalelab/scalelab/engine"
)

// Registry is the collection, in the scenario's database, where scalelab
// records the collections it creates: {_id: name, mark}, an _id ending in
// "*" standing for the collections named by its prefix that a scenario
// creates as it runs (one per user). Before a run drops, creates or writes
// into a collection it checks that the collection, if it exists, is
// recorded there (Claim): one that is not is a user's, refused with an
// engine.NotOwnedError unless mongodb.replace_existing is set. (Servers do
// not all keep collection comments, FerretDB among them: the registry
// works on every one.)
const Registry = "scalelab_objects"

// Named matches the given collection names.
func Named(names ...string) func(string) bool {
	return func(n string) bool {
		for _, m := range names {
			if n == m {
				return true
			}
		}
		return false
	}
}

// Prefixed matches the collection names that start with prefix.
func Prefixed(prefix string) func(string) bool {
	return func(n string) bool { return strings.HasPrefix(n, prefix) }
}

// owned reports whether the registry ids record name.
func owned(ids map[string]bool, name string) bool {
	if ids[name] {
		return true
	}
	for id := range ids {
		if p, ok := strings.CutSuffix(id, "*"); ok && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Unowned returns the collections of the database that match and are not
// recorded in the registry as scalelab's.
func (c *Conn) Unowned(ctx context.Context, match func(string) bool) ([]string, error) {
	ctx, cancel := Unmeasured(ctx)
	defer cancel()
	db := c.Primary()
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("mongodb: list the collections of %s: %w", c.t.Database, err)
	}
	cur, err := db.Collection(Registry).Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("mongodb: read %s.%s: %w", c.t.Database, Registry, err)
	}
	var rows []struct {
		ID   string `bson:"_id"`
		Mark string `bson:"mark"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("mongodb: read %s.%s: %w", c.t.Database, Registry, err)
	}
	ids := map[string]bool{}
	for _, r := range rows {
		if engine.IsMark(r.Mark) {
			ids[r.ID] = true
		}
	}
	var out []string
	for _, n := range names {
		if n != Registry && !strings.HasPrefix(n, "system.") && match(n) && !owned(ids, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// Claim checks, before anything is written, that no collection that
// matches exists without being recorded as scalelab's: the first such
// collection is refused with an *engine.NotOwnedError (wrapping
// engine.ErrNotOwned and engine.ErrConfig), unless
// mongodb.replace_existing is set, in which case they are dropped. A
// scenario claims every collection it uses before it writes any, then
// records them (Own).
func (c *Conn) Claim(ctx context.Context, match func(string) bool) error {
	foreign, err := c.Unowned(ctx, match)
	if err != nil || len(foreign) == 0 {
		return err
	}
	if !c.opts.ReplaceExisting {
		return &engine.NotOwnedError{Engine: Name, Kind: "collection", Name: c.t.Database + "." + foreign[0], Namespace: KeyDatabase,
			Also: engine.ObjectNames(foreign[1:], func(n string) string { return c.t.Database + "." + n })}
	}
	ctx, cancel := Unmeasured(ctx)
	defer cancel()
	for _, n := range foreign {
		if err := c.Primary().Collection(n).Drop(ctx); err != nil {
			return fmt.Errorf("mongodb: drop %s: %w", n, err)
		}
	}
	return nil
}

// Own records names (collections; a name ending in "*" for those of its
// prefix) in the registry as scalelab's, with the connection's mark.
func (c *Conn) Own(ctx context.Context, names ...string) error {
	ctx, cancel := Unmeasured(ctx)
	defer cancel()
	mark := c.opts.Mark
	if mark == "" {
		mark = engine.Mark("", "")
	}
	reg := c.Primary().Collection(Registry)
	for _, n := range names {
		_, err := reg.UpdateOne(ctx, bson.D{{Key: "_id", Value: n}}, bson.D{{Key: "$set", Value: bson.D{{Key: "mark", Value: mark}}}},
			options.UpdateOne().SetUpsert(true))
		if err != nil {
			return fmt.Errorf("mongodb: record %s in %s: %w", n, Registry, err)
		}
	}
	return nil
}
