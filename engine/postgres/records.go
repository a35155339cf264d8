package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scalelab/scalelab/engine"
)

var (
	_ engine.Records    = (*Conn)(nil)
	_ engine.Classifier = (*Conn)(nil)
)

// Classify gives PostgreSQL's errors their class (Classify).
func (c *Conn) Classify(ctx context.Context, err error) error { return Classify(ctx, err) }

// collection keeps records in NAME(id varchar PRIMARY KEY, FIELD text,
// ...), one column per field, as YCSB's JDBC binding does. Keys use the
// "C" collation so that scans run in byte order whatever the database's
// locale. Writes go to the primary; reads to the primary, or with
// postgres.read_from=replicas to the replicas in turn; the read-back to
// the primary. Reads run at the wire level, prepared once per connection
// by the engine's pool (postgres.prepared).
type collection struct {
	c         *Conn
	table     string
	cols      []string
	prepared  bool
	readAll   string
	readOne   []string // by field
	scanAll   string
	scanOne   []string
	updateAll string
	updateOne []string
	insertOne string
	insertArr string // INSERT ... SELECT FROM unnest of one array per column
	deleteOne string
	columns   []string               // for COPY
	updates   engine.FieldStatements // UPDATE of several fields
}

// Collection creates the table of spec on the primary (dropping it first
// with spec.Recreate) in the schema and marks it, after Claim has found
// the name free or scalelab's.
func (c *Conn) Collection(ctx context.Context, spec engine.CollectionSpec) (engine.Collection, error) {
	s := &collection{c: c, table: spec.Name, cols: spec.Fields, prepared: c.Options().Prepared}
	defs := make([]string, len(s.cols))
	for f, col := range s.cols {
		defs[f] = col + " text"
	}
	p := c.Primary()
	if err := c.Claim(ctx, s.table); err != nil {
		return nil, err // names the engine and the table
	}
	if spec.Recreate {
		if _, err := p.Exec(ctx, "DROP TABLE IF EXISTS "+s.table); err != nil {
			return nil, fmt.Errorf("postgres collection: drop %s: %w", s.table, err)
		}
	}
	create := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (id varchar(255) COLLATE "C" PRIMARY KEY, %s)`, s.table, strings.Join(defs, ", "))
	if _, err := p.Exec(ctx, create); err != nil {
		return nil, fmt.Errorf("postgres collection: create %s: %w", s.table, err)
	}
	if err := c.MarkTables(ctx, s.table); err != nil {
		return nil, fmt.Errorf("postgres collection: %w", err)
	}
	all := strings.Join(s.cols, ", ")
	s.readAll = "SELECT " + all + " FROM " + s.table + " WHERE id = $1"
	s.scanAll = "SELECT id, " + all + " FROM " + s.table + " WHERE id >= $1 ORDER BY id LIMIT $2"
	params := make([]string, len(s.cols)+1)
	arrays := make([]string, len(s.cols)+1)
	params[0], arrays[0] = "$1", "$1::varchar[]"
	for f, col := range s.cols {
		params[f+1] = fmt.Sprintf("$%d", f+2)
		arrays[f+1] = fmt.Sprintf("$%d::text[]", f+2)
		s.readOne = append(s.readOne, "SELECT "+col+" FROM "+s.table+" WHERE id = $1")
		s.scanOne = append(s.scanOne, "SELECT id, "+col+" FROM "+s.table+" WHERE id >= $1 ORDER BY id LIMIT $2")
		s.updateOne = append(s.updateOne, "UPDATE "+s.table+" SET "+col+" = $1 WHERE id = $2")
	}
	s.updateAll = s.updateSQL(nil)
	s.insertOne = "INSERT INTO " + s.table + " (id, " + all + ") VALUES (" + strings.Join(params, ", ") + ")"
	s.insertArr = "INSERT INTO " + s.table + " (id, " + all + ") SELECT * FROM unnest(" + strings.Join(arrays, ", ") + ")"
	s.deleteOne = "DELETE FROM " + s.table + " WHERE id = $1"
	s.columns = append([]string{"id"}, s.cols...)
	return s, nil
}

// updateSQL is the UPDATE of fields (every field when nil), the key last.
func (s *collection) updateSQL(fields []int) string {
	if fields == nil {
		fields = make([]int, len(s.cols))
		for f := range fields {
			fields[f] = f
		}
	}
	sets := make([]string, len(fields))
	for i, f := range fields {
		sets[i] = fmt.Sprintf("%s = $%d", s.cols[f], i+1)
	}
	return fmt.Sprintf("UPDATE %s SET %s WHERE id = $%d", s.table, strings.Join(sets, ", "), len(fields)+1)
}

// rawQuery runs a read statement on a connection of p at the wire level
// (pgconn): parameters and results as text bytes, no type mapping, which
// keeps scalelab's own CPU per read low. The statement is prepared once per
// connection under name (postgres.prepared), else sent unprepared. row is
// called with each row's values, valid only during the call.
func (s *collection) rawQuery(ctx context.Context, p *pgxpool.Pool, name, sql string, params [][]byte, row func(vals [][]byte)) error {
	c, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	pc := c.Conn().PgConn()
	var rr *pgconn.ResultReader
	if s.prepared {
		sd, err := c.Conn().Prepare(ctx, name, sql)
		if err != nil {
			return err
		}
		rr = pc.ExecStatement(ctx, sd, params, nil, nil) // no Describe: the columns are known
	} else {
		rr = pc.ExecParams(ctx, sql, params, nil, nil, nil)
	}
	for rr.NextRow() {
		row(rr.Values())
	}
	_, err = rr.Close()
	return err
}

// addRow copies a row's values (key first when key is nil) into dst.
func addRow(vals [][]byte, key []byte, field int, dst *engine.Rows) {
	if key == nil {
		key, vals = vals[0], vals[1:]
	}
	dst.AddValues(key, field, vals)
}

func (s *collection) Get(ctx context.Context, key []byte, field int, dst *engine.Rows) error {
	name, q := s.table+"_get", s.readAll
	if field >= 0 {
		name, q = s.table+"_get_"+strconv.Itoa(field), s.readOne[field]
	}
	params := [1][]byte{key}
	found := false
	err := s.rawQuery(ctx, s.c.ReadPool(), name, q, params[:], func(vals [][]byte) {
		found = true
		addRow(vals, key, field, dst)
	})
	if err != nil {
		return err
	}
	if !found {
		return engine.ErrNotFound
	}
	return nil
}

func (s *collection) Scan(ctx context.Context, start []byte, n, field int, dst *engine.Rows) error {
	name, q := s.table+"_scan", s.scanAll
	if field >= 0 {
		name, q = s.table+"_scan_"+strconv.Itoa(field), s.scanOne[field]
	}
	var limit [20]byte
	params := [2][]byte{start, strconv.AppendInt(limit[:0], int64(n), 10)}
	return s.rawQuery(ctx, s.c.ReadPool(), name, q, params[:], func(vals [][]byte) {
		addRow(vals, nil, field, dst)
	})
}

// updateStmt returns the UPDATE of fields.
func (s *collection) updateStmt(fields []int) string {
	switch {
	case fields == nil:
		return s.updateAll
	case len(fields) == 1:
		return s.updateOne[fields[0]]
	}
	return s.updates.Get(fields, s.updateSQL)
}

func (s *collection) Update(ctx context.Context, key []byte, fields []int, vals [][]byte) error {
	args := engine.TextUpdateArgs(fields, vals)
	tag, err := s.c.Primary().Exec(ctx, s.updateStmt(fields), append(args, string(key))...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("update %s: %w", key, engine.ErrNotFound)
	}
	return nil
}

func (s *collection) Delete(ctx context.Context, key []byte) error {
	tag, err := s.c.Primary().Exec(ctx, s.deleteOne, string(key))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete %s: %w", key, engine.ErrNotFound)
	}
	return nil
}

func (s *collection) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	_, err := s.c.Primary().Exec(ctx, s.insertOne, engine.AppendTextRecord(make([]any, 0, len(vals)+1), key, vals)...)
	return err
}

// InsertBatch writes b with COPY (postgres.copy), else with one INSERT of
// unnested arrays.
func (s *collection) InsertBatch(ctx context.Context, b *engine.Batch) error {
	p := s.c.Primary()
	if s.c.Options().Copy {
		row := make([]any, 0, len(s.cols)+1)
		n, err := p.CopyFrom(ctx, pgx.Identifier{s.table}, s.columns, pgx.CopyFromSlice(b.N, func(i int) ([]any, error) {
			row = engine.AppendTextRecord(row[:0], b.Keys[i], b.Row(i))
			return row, nil
		}))
		if err == nil && n != int64(b.N) {
			err = fmt.Errorf("COPY wrote %d of %d rows", n, b.N)
		}
		return err
	}
	cols := make([][]string, len(s.cols)+1)
	for c := range cols {
		cols[c] = make([]string, b.N)
	}
	for i := range b.N {
		cols[0][i] = string(b.Keys[i])
		for f, v := range b.Row(i) {
			cols[f+1][i] = string(v)
		}
	}
	args := make([]any, len(cols))
	for c := range cols {
		args[c] = cols[c]
	}
	_, err := p.Exec(ctx, s.insertArr, args...)
	return err
}

func (s *collection) AfterLoad(context.Context) error { return nil }

// Count counts on the primary.
func (s *collection) Count(ctx context.Context) (int64, error) {
	var n int64
	err := s.c.Primary().QueryRow(ctx, "SELECT count(*) FROM "+s.table).Scan(&n)
	return n, err
}

// MaxKey reads the highest key on the primary.
func (s *collection) MaxKey(ctx context.Context) ([]byte, error) {
	var k *string
	if err := s.c.Primary().QueryRow(ctx, "SELECT max(id) FROM "+s.table).Scan(&k); err != nil || k == nil {
		return nil, err
	}
	return []byte(*k), nil
}

// ReadBack reads the keys from the primary in one query.
func (s *collection) ReadBack(ctx context.Context, keys [][]byte, field int, dst *engine.Rows) error {
	cols := strings.Join(s.cols, ", ")
	if field >= 0 {
		cols = s.cols[field]
	}
	rows, err := s.c.Primary().Query(ctx, "SELECT id, "+cols+" FROM "+s.table+" WHERE id = ANY($1)", engine.Strings(keys))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		addRow(rows.RawValues(), nil, field, dst)
	}
	return rows.Err()
}

// Traits: reads from replicas may miss a write not yet replayed; scans in
// key order; a missing key is told.
func (s *collection) Traits() engine.Traits {
	return engine.Traits{ReadsOwnWrites: s.c.Options().ReadFrom != "replicas" || len(s.c.Replicas()) == 0, KeyOrderedScans: true, TellsMissing: true}
}

func (s *collection) Close() error { return nil }

// HasRecords reports true: the engine's connections implement
// engine.Records.
func (*Engine) HasRecords() bool { return true }
