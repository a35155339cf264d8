package logs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
)

func init() { openers[mongodb.Name] = openMongo }

// mongoCollection is the collection of the log records.
const mongoCollection = "logs"

// mongoIndexes are the secondary indexes on MongoDB, named as the SQL
// engines' (sqlIndexes).
var mongoIndexes = []struct {
	name string
	keys bson.D
}{
	{sqlIndexes[0][0], bson.D{{Key: "ts", Value: 1}, {Key: "machine", Value: 1}}},
	{sqlIndexes[1][0], bson.D{{Key: "ts", Value: 1}, {Key: "service", Value: 1}, {Key: "severity", Value: 1}}},
}

// Server error codes that dropping an absent index may return.
const (
	mongoNamespaceNotFound = 26
	mongoIndexNotFound     = 27
)

// mongoDoc is a record as stored: the record id is the document's _id.
type mongoDoc struct {
	ID       int64  `bson:"_id"`
	TS       int64  `bson:"ts"`
	Machine  string `bson:"machine"`
	Service  string `bson:"service"`
	Severity int32  `bson:"severity"`
	Message  string `bson:"message"`
}

// newMongoDoc returns the document of r.
func newMongoDoc(r *Record) mongoDoc {
	return mongoDoc{ID: r.ID, TS: r.Timestamp, Machine: r.Machine, Service: r.Service, Severity: int32(r.Severity), Message: r.Message}
}

// mongoStore keeps records as documents {_id, ts, machine, service,
// severity, message} of the collection logs. Users' operations go through
// the connection's Database (a router chosen per operation); checks and
// the audit's read-back read the primary. Reads report that they saw every
// acknowledged write when they read the primary (mongodb.read_preference
// primary, the default). The store is its own view: the driver routes
// reads by the read preference, and a user's writes change nothing.
type mongoStore struct {
	c *mongodb.Conn
	// primary reports whether users' reads go to the primary.
	primary bool
}

// openMongo opens the store on the engine connection, once the engine has
// checked that the collection, if it exists, is scalelab's. With recreate
// the engine drops and creates the collection, and shards it on a sharded
// cluster with mongodb.shard_key set.
func openMongo(ctx context.Context, env scenario.Env, recreate bool) (store, error) {
	c, err := kit.AsConn[*mongodb.Conn](env)
	if err != nil {
		return nil, err
	}
	// checks the collection is scalelab's (whether it is recreated or
	// written into) and records it so
	if _, err := c.Collection(ctx, engine.CollectionSpec{Name: mongoCollection, Recreate: recreate}); err != nil {
		return nil, fmt.Errorf("logs mongodb: open %s: %w", mongoCollection, err)
	}
	return &mongoStore{c: c, primary: c.Options().ReadPref == "primary"}, nil
}

// coll is the collection on a router chosen for one user operation.
func (s *mongoStore) coll() *mongo.Collection { return s.c.Database().Collection(mongoCollection) }

// primaryColl is the collection read from the primary.
func (s *mongoStore) primaryColl() *mongo.Collection {
	return s.c.Primary().Collection(mongoCollection)
}

// insert writes one document.
func (s *mongoStore) insert(ctx context.Context, r *Record) error {
	_, err := s.coll().InsertOne(ctx, newMongoDoc(r))
	return err
}

// insertBatch writes rs with one unordered insertMany.
func (s *mongoStore) insertBatch(ctx context.Context, rs []Record) error {
	ctx, cancel := mongodb.Unmeasured(ctx)
	defer cancel()
	docs := make([]any, len(rs))
	for i := range rs {
		docs[i] = newMongoDoc(&rs[i])
	}
	_, err := s.coll().InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	return err
}

// finishLoad creates or drops the secondary indexes. MongoDB keeps its
// statistics as it goes, and a read of the primary sees every
// acknowledged write: there is nothing else to wait for.
func (s *mongoStore) finishLoad(ctx context.Context, indexes bool) error {
	ctx, cancel := mongodb.Unmeasured(ctx)
	defer cancel()
	iv := s.primaryColl().Indexes()
	if indexes {
		models := make([]mongo.IndexModel, len(mongoIndexes))
		for i, ix := range mongoIndexes {
			models[i] = mongo.IndexModel{Keys: ix.keys, Options: options.Index().SetName(ix.name)}
		}
		if _, err := iv.CreateMany(ctx, models); err != nil {
			return fmt.Errorf("logs mongodb: create indexes: %w", err)
		}
		return nil
	}
	for _, ix := range mongoIndexes {
		err := iv.DropOne(ctx, ix.name)
		var se mongo.ServerError
		if errors.As(err, &se) && (se.HasErrorCode(mongoIndexNotFound) || se.HasErrorCode(mongoNamespaceNotFound)) {
			err = nil
		}
		if err != nil {
			return fmt.Errorf("logs mongodb: drop index %s: %w", ix.name, err)
		}
	}
	return nil
}

// existing counts the documents with _id >= 0 and finds the highest such
// _id, on the primary.
func (s *mongoStore) existing(ctx context.Context) (int64, int64, error) {
	ctx, cancel := mongodb.Unmeasured(ctx)
	defer cancel()
	coll := s.primaryColl()
	loaded := bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: int64(0)}}}}
	n, err := coll.CountDocuments(ctx, loaded)
	if err != nil {
		return 0, 0, fmt.Errorf("logs mongodb: count records: %w", err)
	}
	var last struct {
		ID int64 `bson:"_id"`
	}
	err = coll.FindOne(ctx, loaded, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}}).
		SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&last)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return n, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("logs mongodb: highest record id: %w", err)
	}
	return n, last.ID + 1, nil
}

// deleteFresh removes the documents with _id < 0.
func (s *mongoStore) deleteFresh(ctx context.Context) error {
	ctx, cancel := mongodb.Unmeasured(ctx)
	defer cancel()
	_, err := s.primaryColl().DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: int64(0)}}}})
	if err != nil {
		return fmt.Errorf("logs mongodb: delete freshness records: %w", err)
	}
	return nil
}

// readBack reports which record ids the primary holds, with one find of
// their _ids.
func (s *mongoStore) readBack(ctx context.Context, ids []int64, present []bool) error {
	ctx, cancel := mongodb.Unmeasured(ctx)
	defer cancel()
	cur, err := s.primaryColl().Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return fmt.Errorf("logs mongodb: read back records: %w", err)
	}
	defer cur.Close(ctx)
	found := make(map[int64]bool, len(ids))
	for cur.Next(ctx) {
		id, ok := cur.Current.Lookup("_id").AsInt64OK()
		if !ok {
			return fmt.Errorf("logs mongodb: read back records: _id of type %s", cur.Current.Lookup("_id").Type)
		}
		found[id] = true
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("logs mongodb: read back records: %w", err)
	}
	markPresent(ids, present, found)
	return nil
}

// newView returns the store: every user reads the same way.
func (s *mongoStore) newView() view { return s }

// wrote does nothing: reads do not depend on the user's writes.
func (s *mongoStore) wrote() {}

// read finds the document whose _id is id.
func (s *mongoStore) read(ctx context.Context, id int64, r *Record) (bool, bool, error) {
	var d mongoDoc
	err := s.coll().FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, s.primary, nil
	}
	if err != nil {
		return false, s.primary, err
	}
	*r = Record{ID: id, Timestamp: d.TS, Machine: d.Machine, Service: d.Service, Severity: int(d.Severity), Message: d.Message}
	return true, s.primary, nil
}

// count counts the documents that match filter.
func (s *mongoStore) count(ctx context.Context, filter bson.D) (int64, bool, error) {
	n, err := s.coll().CountDocuments(ctx, filter)
	return n, s.primary, err
}

// countA counts the documents of timestamp ts.
func (s *mongoStore) countA(ctx context.Context, ts int64) (int64, bool, error) {
	return s.count(ctx, bson.D{{Key: "ts", Value: ts}})
}

// countB counts the documents of timestamp ts and machine.
func (s *mongoStore) countB(ctx context.Context, ts int64, machine string) (int64, bool, error) {
	return s.count(ctx, bson.D{{Key: "ts", Value: ts}, {Key: "machine", Value: machine}})
}

// countC counts the documents of timestamp ts, service and severity.
func (s *mongoStore) countC(ctx context.Context, ts int64, service string, severity int) (int64, bool, error) {
	return s.count(ctx, bson.D{{Key: "ts", Value: ts}, {Key: "service", Value: service}, {Key: "severity", Value: int32(severity)}})
}

// search counts the messages that hold word between spaces, as the
// SQLite store does (wordRegex).
func (s *mongoStore) search(ctx context.Context, word string) (int64, bool, error) {
	return s.count(ctx, bson.D{{Key: "message", Value: bson.Regex{Pattern: wordRegex(word), Options: "s"}}})
}

// countVisible counts on the users' read path, where another user's reads
// go.
func (s *mongoStore) countVisible(ctx context.Context, ts int64) (int64, error) {
	n, _, err := s.countA(ctx, ts)
	return n, err
}

// errorsPerHost groups the matching documents by machine in an aggregation.
func (s *mongoStore) errorsPerHost(ctx context.Context, from, to int64, maxSeverity int, out map[string]int64) (bool, error) {
	cur, err := s.coll().Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{
			{Key: "ts", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lte", Value: to}}},
			{Key: "severity", Value: bson.D{{Key: "$lte", Value: int32(maxSeverity)}}},
		}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$machine"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
	})
	if err != nil {
		return s.primary, err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var g struct {
			Machine string `bson:"_id"`
			N       int64  `bson:"n"`
		}
		if err := cur.Decode(&g); err != nil {
			return s.primary, fmt.Errorf("logs mongodb: errors per host: %w", err)
		}
		out[g.Machine] = g.N
	}
	return s.primary, cur.Err()
}

// close has nothing to release.
func (s *mongoStore) close() error { return nil }

// wordRegex returns a regular expression (for the "s" option: a dot
// matches a newline) with the matches of SQLite's message LIKE
// '% ' || word || ' %' (no ESCAPE): word between two spaces anywhere in
// the message, where in word % is any text and _ any one character, and
// ASCII letters match either case while other characters match only
// themselves, as in SQLite.
func wordRegex(word string) string {
	var b strings.Builder
	b.WriteByte(' ')
	for _, c := range word {
		switch {
		case c == '%':
			b.WriteString(".*")
		case c == '_':
			b.WriteByte('.')
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			b.WriteString("[" + string(c|0x20) + string(c&^0x20) + "]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteByte(' ')
	return b.String()
}
