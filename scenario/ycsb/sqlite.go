package ycsb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[sqlite.Name] = openSQLite }

// sqliteTable is YCSB's table name.
const sqliteTable = "usertable"

// sqliteMaxVars stays under SQLite's default limit of bound parameters per
// statement (32766), which caps the rows of one multi-row INSERT.
const sqliteMaxVars = 32000

// sqliteRowsPerInsert is the rows of one multi-row INSERT when loading.
const sqliteRowsPerInsert = 500

// sqliteStore keeps records in usertable(YCSB_KEY TEXT PRIMARY KEY, FIELD0
// TEXT, ...), as YCSB's JDBC binding does, through prepared statements.
type sqliteStore struct {
	db        *sql.DB
	nf        int
	readAll   *sql.Stmt
	readOne   []*sql.Stmt // by field
	scanAll   *sql.Stmt
	scanOne   []*sql.Stmt
	updateAll *sql.Stmt
	updateOne []*sql.Stmt
	insertOne *sql.Stmt
	insertN   *sql.Stmt // multi-row insert of perInsert rows
	perInsert int
	stmts     []*sql.Stmt // every statement, for close
	loadMu    sync.Mutex  // one load transaction at a time: SQLite has one writer
}

func openSQLite(ctx context.Context, env scenario.Env, cfg *config) (store, error) {
	c, err := asConn[*sqlite.Conn](env)
	if err != nil {
		return nil, err
	}
	s := &sqliteStore{db: c.DB(), nf: cfg.fields}
	if err := s.prepare(ctx, cfg.load); err != nil {
		s.close()
		return nil, errEngine(env.Engine, err)
	}
	return s, nil
}

func (s *sqliteStore) prepare(ctx context.Context, recreate bool) error {
	cols := make([]string, s.nf)
	defs := make([]string, s.nf)
	for f := range cols {
		cols[f] = fmt.Sprintf("FIELD%d", f)
		defs[f] = cols[f] + " TEXT"
	}
	if recreate {
		if _, err := s.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+sqliteTable); err != nil {
			return fmt.Errorf("drop %s: %w", sqliteTable, err)
		}
	}
	create := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (YCSB_KEY TEXT PRIMARY KEY, %s)", sqliteTable, strings.Join(defs, ", "))
	if _, err := s.db.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("create %s: %w", sqliteTable, err)
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
	all := strings.Join(cols, ", ")
	s.readAll = prep(fmt.Sprintf("SELECT %s FROM %s WHERE YCSB_KEY = ?", all, sqliteTable))
	s.scanAll = prep(fmt.Sprintf("SELECT YCSB_KEY, %s FROM %s WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?", all, sqliteTable))
	sets := make([]string, s.nf)
	for f, c := range cols {
		sets[f] = c + " = ?"
		s.readOne = append(s.readOne, prep(fmt.Sprintf("SELECT %s FROM %s WHERE YCSB_KEY = ?", c, sqliteTable)))
		s.scanOne = append(s.scanOne, prep(fmt.Sprintf("SELECT YCSB_KEY, %s FROM %s WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?", c, sqliteTable)))
		s.updateOne = append(s.updateOne, prep(fmt.Sprintf("UPDATE %s SET %s = ? WHERE YCSB_KEY = ?", sqliteTable, c)))
	}
	s.updateAll = prep(fmt.Sprintf("UPDATE %s SET %s WHERE YCSB_KEY = ?", sqliteTable, strings.Join(sets, ", ")))
	row := "(?" + strings.Repeat(", ?", s.nf) + ")"
	insert := fmt.Sprintf("INSERT INTO %s (YCSB_KEY, %s) VALUES ", sqliteTable, all)
	s.insertOne = prep(insert + row)
	s.perInsert = max(1, min(sqliteRowsPerInsert, sqliteMaxVars/(s.nf+1)))
	s.insertN = prep(insert + row + strings.Repeat(", "+row, s.perInsert-1))
	return err
}

// classify classes err for the load model's metrics.
func classify(ctx context.Context, err error) error { return sqlite.Classify(ctx, err) }

// scanRow copies the current row of rows (key first when withKey) into res.
func (s *sqliteStore) scanRow(rows *sql.Rows, key []byte, field int, res *result) error {
	n := s.nf
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
	i := res.addRow(key)
	for j := range n {
		f := j
		if field >= 0 {
			f = field
		}
		if raw[j] != nil {
			res.set(i, f, raw[j])
		}
	}
	return nil
}

func (s *sqliteStore) read(ctx context.Context, key []byte, field int, res *result) error {
	st := s.readAll
	if field >= 0 {
		st = s.readOne[field]
	}
	rows, err := st.QueryContext(ctx, string(key))
	if err != nil {
		return classify(ctx, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return classify(ctx, err)
		}
		return engine.ErrNotFound
	}
	if err := s.scanRow(rows, key, field, res); err != nil {
		return classify(ctx, err)
	}
	return classify(ctx, rows.Close())
}

func (s *sqliteStore) scan(ctx context.Context, start []byte, n, field int, res *result) error {
	st := s.scanAll
	if field >= 0 {
		st = s.scanOne[field]
	}
	rows, err := st.QueryContext(ctx, string(start), n)
	if err != nil {
		return classify(ctx, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := s.scanRow(rows, nil, field, res); err != nil {
			return classify(ctx, err)
		}
	}
	if err := rows.Err(); err != nil {
		return classify(ctx, err)
	}
	return classify(ctx, rows.Close())
}

func (s *sqliteStore) update(ctx context.Context, key []byte, field int, vals [][]byte) error {
	var res sql.Result
	var err error
	if field >= 0 {
		res, err = s.updateOne[field].ExecContext(ctx, string(vals[field]), string(key))
	} else {
		args := make([]any, 0, s.nf+1)
		for _, v := range vals {
			args = append(args, string(v))
		}
		res, err = s.updateAll.ExecContext(ctx, append(args, string(key))...)
	}
	if err != nil {
		return classify(ctx, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return engine.ErrNotFound
	}
	return nil
}

// appendRecord appends key and vals as statement arguments. Values go in as
// strings, so they are stored as TEXT like YCSB's JDBC binding stores them.
func appendRecord(args []any, key []byte, vals [][]byte) []any {
	args = append(args, string(key))
	for _, v := range vals {
		args = append(args, string(v))
	}
	return args
}

func (s *sqliteStore) insert(ctx context.Context, key []byte, vals [][]byte) error {
	_, err := s.insertOne.ExecContext(ctx, appendRecord(make([]any, 0, s.nf+1), key, vals)...)
	return classify(ctx, err)
}

// insertBatch inserts b in one transaction, with multi-row INSERTs of
// perInsert rows and single-row INSERTs for the rest.
func (s *sqliteStore) insertBatch(ctx context.Context, b *batch) error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return classify(ctx, err)
	}
	defer tx.Rollback()
	many, one := tx.StmtContext(ctx, s.insertN), tx.StmtContext(ctx, s.insertOne)
	args := make([]any, 0, s.perInsert*(s.nf+1))
	i := 0
	for ; i+s.perInsert <= b.n; i += s.perInsert {
		args = args[:0]
		for r := i; r < i+s.perInsert; r++ {
			args = appendRecord(args, b.keys[r], b.row(r))
		}
		if _, err := many.ExecContext(ctx, args...); err != nil {
			return classify(ctx, err)
		}
	}
	for ; i < b.n; i++ {
		if _, err := one.ExecContext(ctx, appendRecord(args[:0], b.keys[i], b.row(i))...); err != nil {
			return classify(ctx, err)
		}
	}
	return classify(ctx, tx.Commit())
}

func (s *sqliteStore) close() error {
	var first error
	for _, st := range s.stmts {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
