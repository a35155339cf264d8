package social

import (
	"context"
	"errors"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[cassandra.Name] = openCassandra }

// casTable is the users table in the engine's keyspace.
const casTable = "social_users"

// casStore keeps each user in social_users (id text PRIMARY KEY, doc
// text, status text, last_seen bigint): the profile as a JSON document,
// and the two fields updates write as their own columns, so that an
// update is a plain two-column write at the write consistency (the
// columns override the document's copy). Reads and scans use the read
// consistency, writes the write consistency (cassandra.*_consistency).
//
// What a Cassandra user gets, and this store keeps:
//   - Every write is an upsert: insert does not check for an existing
//     user, and update and delete cannot tell that a user is missing
//     (no lightweight transactions, which would cost four round trips).
//     An update of a deleted user leaves a row without a document; reads
//     and counts treat such a row as no user.
//   - Scans run in token order, as YCSB's Cassandra binding does:
//     users whose token(id) >= token(start); the store checks that the
//     tokens ascend.
type casStore struct {
	c                                       *cassandra.Conn
	strongRW                                bool
	qRead, qUpdate, qInsert, qDelete, qScan string
	qCount, qKeys                           string
}

func openCassandra(ctx context.Context, env scenario.Env, cfg *config) (store, error) {
	c, err := asConn[*cassandra.Conn](env)
	if err != nil {
		return nil, err
	}
	t := c.Table(casTable)
	s := &casStore{c: c, strongRW: c.Strong(),
		qRead:   "SELECT doc, status, last_seen FROM " + t + " WHERE id = ?",
		qUpdate: "UPDATE " + t + " SET status = ?, last_seen = ? WHERE id = ?",
		qInsert: "INSERT INTO " + t + " (id, doc, status, last_seen) VALUES (?, ?, ?, ?)",
		qDelete: "DELETE FROM " + t + " WHERE id = ?",
		qScan:   "SELECT token(id), id, doc, status, last_seen FROM " + t + " WHERE token(id) >= token(?) LIMIT ?",
		qCount:  "SELECT doc FROM " + t,
		qKeys:   "SELECT id FROM " + t,
	}
	if cfg.load {
		if err := c.DropTable(ctx, casTable); err != nil {
			return nil, fmt.Errorf("social on %s: %w", env.Engine, err)
		}
	}
	if err := c.CreateTable(ctx, casTable, "id text PRIMARY KEY, doc text, status text, last_seen bigint"); err != nil {
		return nil, fmt.Errorf("social on %s: %w", env.Engine, err)
	}
	return s, nil
}

// casUser fills u from a row's columns; a row without a document (an
// update of a deleted user) is no user.
func casUser(key, doc, status string, lastSeen int64, u *User) error {
	if doc == "" {
		return engine.ErrNotFound
	}
	if err := decodeUser(key, []byte(doc), u); err != nil {
		return err
	}
	u.Status, u.LastSeen = status, lastSeen
	return nil
}

func (s *casStore) read(ctx context.Context, key string, u *User) error {
	var doc, status string
	var lastSeen int64
	err := s.c.Read(s.qRead, key).ScanContext(ctx, &doc, &status, &lastSeen)
	if errors.Is(err, gocql.ErrNotFound) {
		return engine.ErrNotFound
	}
	if err != nil {
		return s.c.Classify(ctx, err)
	}
	return casUser(key, doc, status, lastSeen, u)
}

func (s *casStore) update(ctx context.Context, key, status string, lastSeen int64) error {
	return s.c.Classify(ctx, s.c.Write(s.qUpdate, status, lastSeen, key).ExecContext(ctx))
}

func (s *casStore) row(u *User) []any { return []any{u.ID, string(u.Doc()), u.Status, u.LastSeen} }

func (s *casStore) insert(ctx context.Context, u *User) error {
	return s.c.Classify(ctx, s.c.Write(s.qInsert, s.row(u)...).ExecContext(ctx))
}

func (s *casStore) remove(ctx context.Context, key string) error {
	return s.c.Classify(ctx, s.c.Write(s.qDelete, key).ExecContext(ctx))
}

func (s *casStore) scan(ctx context.Context, start string, n int, fn func(u *User) error) error {
	iter := s.c.Read(s.qScan, start, n).IterContext(ctx)
	var (
		token, prev   int64
		id, doc, stat string
		lastSeen      int64
		u             User
		rows          int
	)
	for iter.Scan(&token, &id, &doc, &stat, &lastSeen) {
		if rows > 0 && token <= prev {
			iter.Close()
			return fmt.Errorf("%w: scan from %s: token %d after %d", engine.ErrIntegrity, start, token, prev)
		}
		prev = token
		rows++
		if err := casUser(id, doc, stat, lastSeen, &u); errors.Is(err, engine.ErrNotFound) {
			continue
		} else if err != nil {
			iter.Close()
			return err
		}
		if err := fn(&u); err != nil {
			iter.Close()
			return err
		}
	}
	return s.c.Classify(ctx, iter.Close())
}

// insertBatch writes a load batch in unlogged batches of
// cassandra.batch_size rows.
func (s *casStore) insertBatch(ctx context.Context, users []User) error {
	rows := make([][]any, len(users))
	for i := range users {
		rows[i] = s.row(&users[i])
	}
	return s.c.WriteBatch(ctx, s.qInsert, rows)
}

func (s *casStore) afterLoad(context.Context) error { return nil }

// count pages through the table at the read consistency, counting rows
// with a document.
func (s *casStore) count(ctx context.Context) (int64, error) {
	iter := s.c.Read(s.qCount).PageSize(5000).IterContext(ctx)
	var n int64
	var doc string
	for iter.Scan(&doc) {
		if doc != "" {
			n++
		}
	}
	return n, s.c.Classify(ctx, iter.Close())
}

// maxKey pages through the table's keys at the read consistency.
func (s *casStore) maxKey(ctx context.Context) (string, error) {
	iter := s.c.Read(s.qKeys).PageSize(5000).IterContext(ctx)
	var k, mx string
	for iter.Scan(&k) {
		mx = max(mx, k)
	}
	return mx, s.c.Classify(ctx, iter.Close())
}

func (s *casStore) close() error { return nil }

// strong reports whether reads see every acknowledged write (R + W > RF):
// only then is a missing user a lost write.
func (s *casStore) strong() bool { return s.strongRW }

// reportsMissing reports false: Cassandra writes are upserts.
func (s *casStore) reportsMissing() bool { return false }

// keyOrdered reports false: scans run in token order.
func (s *casStore) keyOrdered() bool { return false }
