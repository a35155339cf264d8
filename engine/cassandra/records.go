package cassandra

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine"
)

var (
	_ engine.Records    = (*Conn)(nil)
	_ engine.Classifier = (*Conn)(nil)
)

// buckets is how many partitions the keys are spread over. Scans read keys
// in order, which CQL gives only within a partition (id is a clustering
// column), so a scan asks every bucket for its first n keys from the start
// key and merges them (YCSB's own Cassandra binding scans in token order,
// which is not key order).
const buckets = 16

// collection keeps records in NAME(b int, id text, live boolean, FIELD
// blob, ..., PRIMARY KEY ((b), id)), b a hash of the key, in the engine's
// keyspace. Reads and writes use the engine's consistency levels. Every
// write is an upsert, as CQL cannot tell a missing row without a
// lightweight transaction (four round trips): Update and Delete do not
// report a missing key. Only Insert sets live, so a row that an Update
// made after a Delete (fields without live) is no record to Get, Scan,
// Count and the read-back.
type collection struct {
	c                 *Conn
	table             string
	cols              []string
	readAll, scanAll  string
	readOne, scanOne  []string
	updateOne         []string
	insertAll, delete string
	updates           engine.FieldStatements // UPDATE of several fields
}

// Collection creates the table of spec (dropping it first with
// spec.Recreate), once it has checked that a table of its name, if any,
// is scalelab's (Claim).
func (c *Conn) Collection(ctx context.Context, spec engine.CollectionSpec) (engine.Collection, error) {
	s := &collection{c: c, table: c.Table(spec.Name), cols: spec.Fields}
	defs := make([]string, len(s.cols))
	marks := make([]string, len(s.cols))
	for f, col := range s.cols {
		defs[f] = col + " blob"
		marks[f] = "?"
	}
	if err := c.Claim(ctx, spec.Name); err != nil {
		return nil, err
	}
	if spec.Recreate {
		if err := c.drop(ctx, spec.Name); err != nil {
			return nil, fmt.Errorf("cassandra collection %s: %w", spec.Name, err)
		}
	}
	if err := c.CreateTable(ctx, spec.Name, "b int, id text, live boolean, "+strings.Join(defs, ", ")+", PRIMARY KEY ((b), id)"); err != nil {
		return nil, fmt.Errorf("cassandra collection %s: %w", spec.Name, err)
	}
	all := strings.Join(s.cols, ", ")
	s.readAll = "SELECT live, " + all + " FROM " + s.table + " WHERE b = ? AND id = ?"
	s.scanAll = "SELECT id, live, " + all + " FROM " + s.table + " WHERE b = ? AND id >= ? LIMIT ?"
	for _, col := range s.cols {
		s.readOne = append(s.readOne, "SELECT live, "+col+" FROM "+s.table+" WHERE b = ? AND id = ?")
		s.scanOne = append(s.scanOne, "SELECT id, live, "+col+" FROM "+s.table+" WHERE b = ? AND id >= ? LIMIT ?")
		s.updateOne = append(s.updateOne, "UPDATE "+s.table+" SET "+col+" = ? WHERE b = ? AND id = ?")
	}
	s.insertAll = "INSERT INTO " + s.table + " (b, id, live, " + all + ") VALUES (?, ?, true, " + strings.Join(marks, ", ") + ")"
	s.delete = "DELETE FROM " + s.table + " WHERE b = ? AND id = ?"
	return s, nil
}

// bucket is the partition of a key.
func bucket(key []byte) int {
	h := fnv.New32a()
	h.Write(key)
	return int(h.Sum32() % buckets)
}

func (s *collection) width(field int) int {
	if field >= 0 {
		return 1
	}
	return len(s.cols)
}

func (s *collection) Get(ctx context.Context, key []byte, field int, rows *engine.Rows) error {
	q := s.readAll
	if field >= 0 {
		q = s.readOne[field]
	}
	vals := make([][]byte, s.width(field))
	var live bool
	dest := make([]any, 0, len(vals)+1)
	dest = append(dest, &live)
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	err := s.c.Read(q, bucket(key), string(key)).ScanContext(ctx, dest...)
	if errors.Is(err, gocql.ErrNotFound) || (err == nil && !live) {
		return fmt.Errorf("get %s: %w", key, engine.ErrNotFound)
	}
	if err != nil {
		return err
	}
	rows.AddValues(key, field, vals)
	return nil
}

// scanned is one row of a bucket's scan.
type scanned struct {
	key  string
	vals [][]byte
}

// Scan asks every bucket in parallel for its first n keys >= start and
// keeps the n smallest live records.
func (s *collection) Scan(ctx context.Context, start []byte, n, field int, rows *engine.Rows) error {
	q := s.scanAll
	if field >= 0 {
		q = s.scanOne[field]
	}
	width := s.width(field)
	var (
		mu       sync.Mutex
		found    []scanned
		firstErr error
		wg       sync.WaitGroup
	)
	for b := range buckets {
		wg.Go(func() {
			iter := s.c.Read(q, b, string(start), n).PageSize(n).IterContext(ctx)
			var local []scanned
			for {
				r := scanned{vals: make([][]byte, width)}
				var live bool
				dest := make([]any, 0, width+2)
				dest = append(dest, &r.key, &live)
				for i := range r.vals {
					dest = append(dest, &r.vals[i])
				}
				if !iter.Scan(dest...) {
					break
				}
				if live {
					local = append(local, r)
				}
			}
			err := iter.Close()
			mu.Lock()
			defer mu.Unlock()
			found = append(found, local...)
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	slices.SortFunc(found, func(a, b scanned) int { return strings.Compare(a.key, b.key) })
	for _, r := range found[:min(n, len(found))] {
		rows.AddValues([]byte(r.key), field, r.vals)
	}
	return nil
}

// updateStmt returns the UPDATE of fields.
func (s *collection) updateStmt(fields []int) string {
	if len(fields) == 1 {
		return s.updateOne[fields[0]]
	}
	return s.updates.Get(fields, func(fields []int) string {
		sets := make([]string, len(fields))
		for i, f := range fields {
			sets[i] = s.cols[f] + " = ?"
		}
		return "UPDATE " + s.table + " SET " + strings.Join(sets, ", ") + " WHERE b = ? AND id = ?"
	})
}

// Update writes the fields (an upsert: a missing key is not reported, and
// the row it makes is no record until an Insert).
func (s *collection) Update(ctx context.Context, key []byte, fields []int, vals [][]byte) error {
	if fields == nil {
		fields = make([]int, len(s.cols))
		for f := range fields {
			fields[f] = f
		}
	}
	args := make([]any, 0, len(fields)+2)
	for _, f := range fields {
		args = append(args, vals[f])
	}
	args = append(args, bucket(key), string(key))
	return s.c.Write(s.updateStmt(fields), args...).ExecContext(ctx)
}

// Delete removes the row (a missing key is not reported).
func (s *collection) Delete(ctx context.Context, key []byte) error {
	return s.c.Write(s.delete, bucket(key), string(key)).ExecContext(ctx)
}

func (s *collection) row(key []byte, vals [][]byte) []any {
	args := make([]any, 0, len(vals)+2)
	args = append(args, bucket(key), string(key))
	for _, v := range vals {
		args = append(args, bytes.Clone(v))
	}
	return args
}

// Insert writes the record (an upsert: an existing key is overwritten).
func (s *collection) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	return s.c.Write(s.insertAll, s.row(key, vals)...).ExecContext(ctx)
}

// InsertBatch writes b in unlogged batches (cassandra.batch_size rows).
func (s *collection) InsertBatch(ctx context.Context, b *engine.Batch) error {
	rows := make([][]any, b.N)
	for i := range b.N {
		rows[i] = s.row(b.Keys[i], b.Row(i))
	}
	return s.c.WriteBatch(ctx, s.insertAll, rows)
}

func (s *collection) AfterLoad(context.Context) error { return nil }

// keys pages through the table at the read consistency, calling fn with
// each live key.
func (s *collection) keys(ctx context.Context, fn func(key string)) error {
	iter := s.c.Read("SELECT id, live FROM " + s.table).PageSize(5000).IterContext(ctx)
	var k string
	var live bool
	for iter.Scan(&k, &live) {
		if live {
			fn(k)
		}
	}
	return iter.Close()
}

// Count pages through the table at the read consistency.
func (s *collection) Count(ctx context.Context) (int64, error) {
	var n int64
	err := s.keys(ctx, func(string) { n++ })
	return n, err
}

// MaxKey pages through the table's keys at the read consistency.
func (s *collection) MaxKey(ctx context.Context) ([]byte, error) {
	var mx string
	found := false
	err := s.keys(ctx, func(k string) {
		if !found || k > mx {
			mx, found = k, true
		}
	})
	if err != nil || !found {
		return nil, err
	}
	return []byte(mx), nil
}

// ReadBack reads the keys, grouped by partition, at consistency ALL (which
// finds a write any replica holds), falling back to the read consistency
// when a replica is down (ReadBackScan).
func (s *collection) ReadBack(ctx context.Context, keys [][]byte, field int, rows *engine.Rows) error {
	byBucket := map[int][]string{}
	for _, k := range keys {
		b := bucket(k)
		byBucket[b] = append(byBucket[b], string(k))
	}
	cols := strings.Join(s.cols, ", ")
	if field >= 0 {
		cols = s.cols[field]
	}
	stmt := "SELECT id, live, " + cols + " FROM " + s.table + " WHERE b = ? AND id IN ?"
	width := s.width(field)
	var (
		id   string
		live bool
	)
	vals := make([][]byte, width)
	dest := make([]any, 0, width+2)
	dest = append(dest, &id, &live)
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	for b, ks := range byBucket {
		for lo := 0; lo < len(ks); lo += ReadBackChunk {
			chunk := ks[lo:min(lo+ReadBackChunk, len(ks))]
			err := s.c.ReadBackScan(ctx, stmt, []any{b, chunk}, dest, func() {
				if live {
					rows.AddValues([]byte(id), field, vals)
				}
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// Traits: reads see every acknowledged write only when R + W > RF; scans
// in key order; writes are upserts.
func (s *collection) Traits() engine.Traits {
	return engine.Traits{ReadsOwnWrites: s.c.Strong(), KeyOrderedScans: true}
}

func (s *collection) Close() error { return nil }

// HasRecords reports true: the engine's connections implement
// engine.Records.
func (*Engine) HasRecords() bool { return true }
