package ycsb

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
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[cassandra.Name] = openCassandra }

// casBuckets is how many partitions the keys are spread over. Scans read
// keys in order, which CQL gives only within a partition (y_id is a
// clustering column), so a scan asks every bucket for its first n keys
// from the start key and merges them: YCSB's own Cassandra binding scans
// in token order instead, which is not key order.
const casBuckets = 16

// casStore keeps records in usertable(b int, y_id text, field0 blob, ...,
// PRIMARY KEY ((b), y_id)), b a hash of the key. Reads and writes use the
// engine's consistency levels. An update is an upsert, as in YCSB's
// binding (CQL cannot tell a missing row without a lightweight
// transaction); reads find missing keys.
type casStore struct {
	c                  *cassandra.Conn
	nf                 int
	table              string
	readAll, scanAll   string
	readOne, scanOne   []string
	updateOne          []string
	insertAll, readKey string
}

func openCassandra(ctx context.Context, env scenario.Env, cfg *config) (store, error) {
	c, err := asConn[*cassandra.Conn](env)
	if err != nil {
		return nil, err
	}
	s := &casStore{c: c, nf: cfg.fields, table: c.Table("usertable")}
	cols := make([]string, s.nf)
	defs := make([]string, s.nf)
	marks := make([]string, s.nf)
	for f := range cols {
		cols[f] = fmt.Sprintf("field%d", f)
		defs[f] = cols[f] + " blob"
		marks[f] = "?"
	}
	if cfg.load {
		if err := c.DropTable(ctx, "usertable"); err != nil {
			return nil, errEngine(env.Engine, err)
		}
	}
	if err := c.CreateTable(ctx, "usertable", "b int, y_id text, "+strings.Join(defs, ", ")+", PRIMARY KEY ((b), y_id)"); err != nil {
		return nil, errEngine(env.Engine, err)
	}
	all := strings.Join(cols, ", ")
	s.readAll = "SELECT " + all + " FROM " + s.table + " WHERE b = ? AND y_id = ?"
	s.scanAll = "SELECT y_id, " + all + " FROM " + s.table + " WHERE b = ? AND y_id >= ? LIMIT ?"
	for _, col := range cols {
		s.readOne = append(s.readOne, "SELECT "+col+" FROM "+s.table+" WHERE b = ? AND y_id = ?")
		s.scanOne = append(s.scanOne, "SELECT y_id, "+col+" FROM "+s.table+" WHERE b = ? AND y_id >= ? LIMIT ?")
		s.updateOne = append(s.updateOne, "UPDATE "+s.table+" SET "+col+" = ? WHERE b = ? AND y_id = ?")
	}
	s.insertAll = "INSERT INTO " + s.table + " (b, y_id, " + all + ") VALUES (?, ?, " + strings.Join(marks, ", ") + ")"
	s.readKey = "SELECT y_id FROM " + s.table + " WHERE b = ? AND y_id = ?"
	return s, nil
}

// bucket is the partition of a key.
func bucket(key []byte) int {
	h := fnv.New32a()
	h.Write(key)
	return int(h.Sum32() % casBuckets)
}

func (s *casStore) read(ctx context.Context, key []byte, field int, res *result) error {
	q := s.readAll
	if field >= 0 {
		q = s.readOne[field]
	}
	n := s.nf
	if field >= 0 {
		n = 1
	}
	vals := make([][]byte, n)
	dest := make([]any, n)
	for i := range vals {
		dest[i] = &vals[i]
	}
	err := s.c.Read(q, bucket(key), string(key)).ScanContext(ctx, dest...)
	if errors.Is(err, gocql.ErrNotFound) {
		return engine.ErrNotFound
	}
	if err != nil {
		return s.c.Classify(ctx, err)
	}
	addRow(vals, key, field, res)
	return nil
}

// scanned is one row of a bucket's scan.
type scanned struct {
	key  string
	vals [][]byte
}

// scan asks every bucket in parallel for its first n keys >= start and
// keeps the n smallest.
func (s *casStore) scan(ctx context.Context, start []byte, n, field int, res *result) error {
	q := s.scanAll
	width := s.nf
	if field >= 0 {
		q, width = s.scanOne[field], 1
	}
	var (
		mu       sync.Mutex
		rows     []scanned
		firstErr error
		wg       sync.WaitGroup
	)
	for b := range casBuckets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			iter := s.c.Read(q, b, string(start), n).PageSize(n).IterContext(ctx)
			var local []scanned
			for {
				r := scanned{vals: make([][]byte, width)}
				dest := make([]any, 0, width+1)
				dest = append(dest, &r.key)
				for i := range r.vals {
					dest = append(dest, &r.vals[i])
				}
				if !iter.Scan(dest...) {
					break
				}
				local = append(local, r)
			}
			err := iter.Close()
			mu.Lock()
			defer mu.Unlock()
			rows = append(rows, local...)
			if err != nil && firstErr == nil {
				firstErr = s.c.Classify(ctx, err)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	slices.SortFunc(rows, func(a, b scanned) int { return strings.Compare(a.key, b.key) })
	for _, r := range rows[:min(n, len(rows))] {
		addRow(r.vals, []byte(r.key), field, res)
	}
	return nil
}

func (s *casStore) update(ctx context.Context, key []byte, field int, vals [][]byte) error {
	if field >= 0 {
		return s.c.Classify(ctx, s.c.Write(s.updateOne[field], vals[field], bucket(key), string(key)).ExecContext(ctx))
	}
	return s.insert(ctx, key, vals)
}

func (s *casStore) row(key []byte, vals [][]byte) []any {
	args := make([]any, 0, s.nf+2)
	args = append(args, bucket(key), string(key))
	for _, v := range vals {
		args = append(args, bytes.Clone(v))
	}
	return args
}

func (s *casStore) insert(ctx context.Context, key []byte, vals [][]byte) error {
	return s.c.Classify(ctx, s.c.Write(s.insertAll, s.row(key, vals)...).ExecContext(ctx))
}

// insertBatch writes b in unlogged batches (cassandra.batch_size rows).
func (s *casStore) insertBatch(ctx context.Context, b *batch) error {
	rows := make([][]any, b.n)
	for i := range b.n {
		rows[i] = s.row(b.keys[i], b.row(i))
	}
	return s.c.WriteBatch(ctx, s.insertAll, rows)
}

// readKeys reads each key at the read consistency.
func (s *casStore) readKeys(ctx context.Context, keys []string, present []bool) error {
	for i, k := range keys {
		var got string
		err := s.c.Read(s.readKey, bucket([]byte(k)), k).ScanContext(ctx, &got)
		switch {
		case errors.Is(err, gocql.ErrNotFound):
			present[i] = false
		case err != nil:
			return fmt.Errorf("read back keys: %w", s.c.Classify(ctx, err))
		default:
			present[i] = true
		}
	}
	return nil
}

func (s *casStore) close() error { return nil }
