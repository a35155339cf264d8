package mongodb

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/scalelab/scalelab/engine"
)

var (
	_ engine.Records    = (*Conn)(nil)
	_ engine.Classifier = (*Conn)(nil)
)

// collection keeps records as documents {_id: key, FIELD: binary, ...} in
// the collection named by the spec, in the target's database. Each
// operation picks its router at random (mongodb.routers=random); the
// read-back reads the primary through the first client.
type collection struct {
	c       *Conn
	name    string
	fields  []string
	proj    []bson.D            // projection per field
	colls   []*mongo.Collection // on each of the connection's clients
	primary *mongo.Collection   // read from the primary
}

// Collection creates the collection of spec (dropping it first with
// spec.Recreate) and shards it on a sharded cluster with a shard key set,
// once it has checked that a collection of its name, if any, is
// scalelab's (Claim); it records the collection as scalelab's (Own).
func (c *Conn) Collection(ctx context.Context, spec engine.CollectionSpec) (engine.Collection, error) {
	ctx, cancel := Unmeasured(ctx)
	defer cancel()
	s := &collection{c: c, name: spec.Name, fields: spec.Fields, proj: make([]bson.D, len(spec.Fields)),
		primary: c.Primary().Collection(spec.Name)}
	for f, name := range spec.Fields {
		s.proj[f] = bson.D{{Key: name, Value: 1}}
	}
	for _, db := range c.dbs {
		s.colls = append(s.colls, db.Collection(spec.Name))
	}
	if err := c.Claim(ctx, Named(spec.Name)); err != nil {
		return nil, err
	}
	if err := c.Own(ctx, spec.Name); err != nil {
		return nil, err
	}
	if spec.Recreate {
		if err := s.primary.Drop(ctx); err != nil {
			return nil, fmt.Errorf("mongodb collection: drop %s: %w", s.name, err)
		}
		if err := c.Primary().CreateCollection(ctx, s.name); err != nil {
			return nil, fmt.Errorf("mongodb collection: create %s: %w", s.name, err)
		}
		if err := c.shardCollection(ctx, s.name); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// coll is the collection on the client of one operation.
func (s *collection) coll() *mongo.Collection { return s.colls[s.c.pick()] }

func (s *collection) findOpts(field int) *options.FindOptionsBuilder {
	o := options.Find()
	if field != engine.AllFields {
		o.SetProjection(s.proj[field])
	}
	return o
}

// add copies a document's fields into a new row of rows.
func (s *collection) add(raw bson.Raw, field int, rows *engine.Rows) error {
	id, err := raw.LookupErr("_id")
	if err != nil {
		return fmt.Errorf("mongodb: document without _id: %w", err)
	}
	key, ok := id.StringValueOK()
	if !ok {
		return fmt.Errorf("mongodb: _id of type %s, want string", id.Type)
	}
	i := rows.AddString(key)
	for f, name := range s.fields {
		if field != engine.AllFields && f != field {
			continue
		}
		v, err := raw.LookupErr(name)
		if err != nil {
			continue
		}
		if _, b, ok := v.BinaryOK(); ok {
			rows.Set(i, f, b)
		} else if str, ok := v.StringValueOK(); ok {
			rows.SetString(i, f, str)
		}
	}
	return nil
}

// Get reads key's record.
func (s *collection) Get(ctx context.Context, key []byte, field int, rows *engine.Rows) error {
	o := options.FindOne()
	if field != engine.AllFields {
		o.SetProjection(s.proj[field])
	}
	raw, err := s.coll().FindOne(ctx, bson.D{{Key: "_id", Value: string(key)}}, o).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("mongodb get %s: %w", key, engine.ErrNotFound)
	}
	if err != nil {
		return err
	}
	return s.add(raw, field, rows)
}

// Scan reads up to n records from start in _id order.
func (s *collection) Scan(ctx context.Context, start []byte, n, field int, rows *engine.Rows) error {
	o := s.findOpts(field).SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(n)).SetBatchSize(int32(min(n, 1000)))
	return s.find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: string(start)}}}}, o, s.coll(), field, rows)
}

func (s *collection) find(ctx context.Context, filter bson.D, o *options.FindOptionsBuilder, coll *mongo.Collection, field int, rows *engine.Rows) error {
	cur, err := coll.Find(ctx, filter, o)
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		if err := s.add(cur.Current, field, rows); err != nil {
			return err
		}
	}
	return cur.Err()
}

func (s *collection) doc(key []byte, vals [][]byte) bson.D {
	d := make(bson.D, 0, len(s.fields)+1)
	d = append(d, bson.E{Key: "_id", Value: string(key)})
	for f, name := range s.fields {
		d = append(d, bson.E{Key: name, Value: bson.Binary{Data: vals[f]}})
	}
	return d
}

// Insert writes a new record; an existing key is a duplicate key error.
func (s *collection) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	_, err := s.coll().InsertOne(ctx, s.doc(key, vals))
	return err
}

// Update sets fields of key's record.
func (s *collection) Update(ctx context.Context, key []byte, fields []int, vals [][]byte) error {
	set := make(bson.D, 0, len(s.fields))
	if fields == nil {
		for f, name := range s.fields {
			set = append(set, bson.E{Key: name, Value: bson.Binary{Data: vals[f]}})
		}
	} else {
		for _, f := range fields {
			set = append(set, bson.E{Key: s.fields[f], Value: bson.Binary{Data: vals[f]}})
		}
	}
	r, err := s.coll().UpdateOne(ctx, bson.D{{Key: "_id", Value: string(key)}}, bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return err
	}
	if r.MatchedCount == 0 && r.Acknowledged {
		return fmt.Errorf("mongodb update %s: %w", key, engine.ErrNotFound)
	}
	return nil
}

// Delete removes key's record.
func (s *collection) Delete(ctx context.Context, key []byte) error {
	r, err := s.coll().DeleteOne(ctx, bson.D{{Key: "_id", Value: string(key)}})
	if err != nil {
		return err
	}
	if r.DeletedCount == 0 && r.Acknowledged {
		return fmt.Errorf("mongodb delete %s: %w", key, engine.ErrNotFound)
	}
	return nil
}

// InsertBatch writes a load batch with one unordered insertMany.
func (s *collection) InsertBatch(ctx context.Context, b *engine.Batch) error {
	ctx, cancel := Unmeasured(ctx)
	defer cancel()
	docs := make([]any, b.N)
	for i := range b.N {
		docs[i] = s.doc(b.Keys[i], b.Row(i))
	}
	_, err := s.coll().InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	return err
}

// AfterLoad has nothing to do: MongoDB's reads see every acknowledged
// write on the primary.
func (s *collection) AfterLoad(context.Context) error { return nil }

// Count counts the documents on the primary.
func (s *collection) Count(ctx context.Context) (int64, error) {
	ctx, cancel := Unmeasured(ctx)
	defer cancel()
	return s.primary.CountDocuments(ctx, bson.D{})
}

// MaxKey returns the highest _id.
func (s *collection) MaxKey(ctx context.Context) ([]byte, error) {
	ctx, cancel := Unmeasured(ctx)
	defer cancel()
	var doc struct {
		ID string `bson:"_id"`
	}
	err := s.primary.FindOne(ctx, bson.D{},
		options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}}).SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []byte(doc.ID), nil
}

// ReadBack reads the records of keys from the primary.
func (s *collection) ReadBack(ctx context.Context, keys [][]byte, field int, rows *engine.Rows) error {
	ctx, cancel := Unmeasured(ctx)
	defer cancel()
	ids := make(bson.A, len(keys))
	for i, k := range keys {
		ids[i] = string(k)
	}
	return s.find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, s.findOpts(field),
		s.primary, field, rows)
}

// Traits: reads see their writes when they read the primary; scans are in
// _id order; updates and deletes tell a missing key.
func (s *collection) Traits() engine.Traits {
	return engine.Traits{ReadsOwnWrites: s.c.opts.ReadPref == "primary", KeyOrderedScans: true, TellsMissing: s.c.opts.W != "0"}
}

// Close has nothing to release.
func (s *collection) Close() error { return nil }
