package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"github.com/scalelab/scalelab/engine"
)

var (
	_ engine.Records    = (*Conn)(nil)
	_ engine.Classifier = (*Conn)(nil)
)

// maxVars stays under SQLite's default limit of bound parameters per
// statement (32766), which caps the rows of one multi-row INSERT.
const maxVars = 32000

// rowsPerInsert is the rows of one multi-row INSERT when loading.
const rowsPerInsert = 500

// readBackChunk is the keys of one read-back query (IN list).
const readBackChunk = 500

// collection keeps records in a table NAME(id TEXT PRIMARY KEY, FIELD
// TEXT, ...), one column per field, as YCSB's JDBC binding does, through
// prepared statements.
type collection struct {
	db        *sql.DB
	table     string
	cols      []string
	readAll   *sql.Stmt
	readOne   []*sql.Stmt // by field
	scanAll   *sql.Stmt
	scanOne   []*sql.Stmt
	updateAll *sql.Stmt
	updateOne []*sql.Stmt
	insertOne *sql.Stmt
	insertN   *sql.Stmt // multi-row insert of perInsert rows
	deleteOne *sql.Stmt
	perInsert int
	stmts     []*sql.Stmt // every statement, for Close
	loadMu    sync.Mutex  // one load transaction at a time: SQLite has one writer
	updMu     sync.RWMutex
	updates   map[uint64]*sql.Stmt // updates of several fields, by field mask
}

// Classify gives SQLite's errors their class (Classify).
func (c *Conn) Classify(ctx context.Context, err error) error { return Classify(ctx, err) }

// Collection creates the table of spec (dropping it first with
// spec.Recreate) after Claim has found the name free or scalelab's, marks
// it, and prepares its statements.
func (c *Conn) Collection(ctx context.Context, spec engine.CollectionSpec) (engine.Collection, error) {
	if err := c.Claim(ctx, spec.Name); err != nil {
		return nil, err // names the engine, the table and the file
	}
	s := &collection{db: c.db, table: spec.Name, cols: spec.Fields, updates: map[uint64]*sql.Stmt{}}
	if err := s.prepare(ctx, c, spec.Recreate); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite collection %s: %w", spec.Name, err)
	}
	return s, nil
}

func (s *collection) prepare(ctx context.Context, c *Conn, recreate bool) error {
	defs := make([]string, len(s.cols))
	for f, c := range s.cols {
		defs[f] = c + " TEXT"
	}
	if recreate {
		if _, err := s.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+s.table); err != nil {
			return fmt.Errorf("drop %s: %w", s.table, err)
		}
	}
	create := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (id TEXT PRIMARY KEY, %s)", s.table, strings.Join(defs, ", "))
	if _, err := s.db.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("create %s: %w", s.table, err)
	}
	if err := c.MarkTables(ctx, s.table); err != nil {
		return err
	}
	var err error
	prep := func(query string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		if st, err = s.db.PrepareContext(ctx, query); err != nil {
			err = fmt.Errorf("prepare %q: %w", query, err)
			return nil
		}
		s.stmts = append(s.stmts, st)
		return st
	}
	all := strings.Join(s.cols, ", ")
	s.readAll = prep(fmt.Sprintf("SELECT %s FROM %s WHERE id = ?", all, s.table))
	s.scanAll = prep(fmt.Sprintf("SELECT id, %s FROM %s WHERE id >= ? ORDER BY id LIMIT ?", all, s.table))
	for _, c := range s.cols {
		s.readOne = append(s.readOne, prep(fmt.Sprintf("SELECT %s FROM %s WHERE id = ?", c, s.table)))
		s.scanOne = append(s.scanOne, prep(fmt.Sprintf("SELECT id, %s FROM %s WHERE id >= ? ORDER BY id LIMIT ?", c, s.table)))
		s.updateOne = append(s.updateOne, prep(fmt.Sprintf("UPDATE %s SET %s = ? WHERE id = ?", s.table, c)))
	}
	s.updateAll = prep(s.updateSQL(nil))
	row := "(?" + strings.Repeat(", ?", len(s.cols)) + ")"
	insert := fmt.Sprintf("INSERT INTO %s (id, %s) VALUES ", s.table, all)
	s.insertOne = prep(insert + row)
	s.perInsert = max(1, min(rowsPerInsert, maxVars/(len(s.cols)+1)))
	s.insertN = prep(insert + row + strings.Repeat(", "+row, s.perInsert-1))
	s.deleteOne = prep(fmt.Sprintf("DELETE FROM %s WHERE id = ?", s.table))
	return err
}

// updateSQL is the UPDATE of fields (every field when nil), the key last.
func (s *collection) updateSQL(fields []int) string {
	var sets []string
	if fields == nil {
		for _, c := range s.cols {
			sets = append(sets, c+" = ?")
		}
	} else {
		for _, f := range fields {
			sets = append(sets, s.cols[f]+" = ?")
		}
	}
	return fmt.Sprintf("UPDATE %s SET %s WHERE id = ?", s.table, strings.Join(sets, ", "))
}

// scanRow copies the current row of rows (key first when withKey) into
// dst.
func (s *collection) scanRow(rows *sql.Rows, key []byte, field int, dst *engine.Rows) error {
	n := len(s.cols)
	if field >= 0 {
		n = 1
	}
	raw := make([]sql.RawBytes, n+1)
	dest := make([]any, 0, n+1)
	if key == nil {
		dest = append(dest, &raw[n])
	}
	for i := range n {
		dest = append(dest, &raw[i])
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	if key == nil {
		key = raw[n]
	}
	i := dst.Add(key)
	for j := range n {
		f := j
		if field >= 0 {
			f = field
		}
		if raw[j] != nil {
			dst.Set(i, f, raw[j])
		}
	}
	return nil
}

func (s *collection) Get(ctx context.Context, key []byte, field int, dst *engine.Rows) error {
	st := s.readAll
	if field >= 0 {
		st = s.readOne[field]
	}
	rows, err := st.QueryContext(ctx, string(key))
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return engine.ErrNotFound
	}
	if err := s.scanRow(rows, key, field, dst); err != nil {
		return err
	}
	return rows.Close()
}

func (s *collection) Scan(ctx context.Context, start []byte, n, field int, dst *engine.Rows) error {
	st := s.scanAll
	if field >= 0 {
		st = s.scanOne[field]
	}
	rows, err := st.QueryContext(ctx, string(start), n)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := s.scanRow(rows, nil, field, dst); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// updateStmt returns the prepared UPDATE of fields.
func (s *collection) updateStmt(ctx context.Context, fields []int) (*sql.Stmt, error) {
	switch {
	case fields == nil:
		return s.updateAll, nil
	case len(fields) == 1:
		return s.updateOne[fields[0]], nil
	}
	mask, ok := fieldMask(fields)
	if !ok {
		return s.db.PrepareContext(ctx, s.updateSQL(fields))
	}
	s.updMu.RLock()
	st := s.updates[mask]
	s.updMu.RUnlock()
	if st != nil {
		return st, nil
	}
	s.updMu.Lock()
	defer s.updMu.Unlock()
	if st = s.updates[mask]; st != nil {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, s.updateSQL(fields))
	if err != nil {
		return nil, err
	}
	s.updates[mask] = st
	s.stmts = append(s.stmts, st)
	return st, nil
}

// fieldMask is the set of fields as a bit mask, for up to 64 fields in
// ascending order.
func fieldMask(fields []int) (uint64, bool) {
	var m uint64
	for i, f := range fields {
		if f >= 64 || (i > 0 && f <= fields[i-1]) {
			return 0, false
		}
		m |= 1 << f
	}
	return m, true
}

func (s *collection) Update(ctx context.Context, key []byte, fields []int, vals [][]byte) error {
	st, err := s.updateStmt(ctx, fields)
	if err != nil {
		return err
	}
	args := engine.TextUpdateArgs(fields, vals)
	res, err := st.ExecContext(ctx, append(args, string(key))...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("update %s: %w", key, engine.ErrNotFound)
	}
	return nil
}

func (s *collection) Delete(ctx context.Context, key []byte) error {
	res, err := s.deleteOne.ExecContext(ctx, string(key))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("delete %s: %w", key, engine.ErrNotFound)
	}
	return nil
}

func (s *collection) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	_, err := s.insertOne.ExecContext(ctx, engine.AppendTextRecord(make([]any, 0, len(vals)+1), key, vals)...)
	return err
}

// InsertBatch inserts b in one transaction, with multi-row INSERTs of
// perInsert rows and single-row INSERTs for the rest.
func (s *collection) InsertBatch(ctx context.Context, b *engine.Batch) error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	many, one := tx.StmtContext(ctx, s.insertN), tx.StmtContext(ctx, s.insertOne)
	args := make([]any, 0, s.perInsert*(len(s.cols)+1))
	i := 0
	for ; i+s.perInsert <= b.N; i += s.perInsert {
		args = args[:0]
		for r := i; r < i+s.perInsert; r++ {
			args = engine.AppendTextRecord(args, b.Keys[r], b.Row(r))
		}
		if _, err := many.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	for ; i < b.N; i++ {
		if _, err := one.ExecContext(ctx, engine.AppendTextRecord(args[:0], b.Keys[i], b.Row(i))...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *collection) AfterLoad(context.Context) error { return nil }

func (s *collection) Count(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM "+s.table).Scan(&n)
	return n, err
}

func (s *collection) MaxKey(ctx context.Context) ([]byte, error) {
	var k sql.NullString
	if err := s.db.QueryRowContext(ctx, "SELECT max(id) FROM "+s.table).Scan(&k); err != nil || !k.Valid {
		return nil, err
	}
	return []byte(k.String), nil
}

// ReadBack reads the keys in chunks of IN lists.
func (s *collection) ReadBack(ctx context.Context, keys [][]byte, field int, dst *engine.Rows) error {
	cols := strings.Join(s.cols, ", ")
	if field >= 0 {
		cols = s.cols[field]
	}
	for lo := 0; lo < len(keys); lo += readBackChunk {
		chunk := keys[lo:min(lo+readBackChunk, len(keys))]
		args := make([]any, len(chunk))
		for i, k := range chunk {
			args[i] = string(k)
		}
		q := fmt.Sprintf("SELECT id, %s FROM %s WHERE id IN (?%s)", cols, s.table, strings.Repeat(", ?", len(chunk)-1))
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			if err := s.scanRow(rows, nil, field, dst); err != nil {
				rows.Close()
				return err
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
	}
	return nil
}

// Traits: one SQLite file: reads see every write, scans in key order, a
// missing key is told.
func (s *collection) Traits() engine.Traits {
	return engine.Traits{ReadsOwnWrites: true, KeyOrderedScans: true, TellsMissing: true}
}

func (s *collection) Close() error {
	var first error
	for _, st := range s.stmts {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// HasRecords reports true: the engine's connections implement
// engine.Records.
func (*Engine) HasRecords() bool { return true }
