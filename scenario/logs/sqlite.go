package logs

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[sqlite.Name] = openSQLite }

// table is the logs table's name on SQL engines.
const table = "logs"

// sqlIndexes are the secondary indexes on SQL engines (name, columns).
var sqlIndexes = [][2]string{
	{"logs_ts_machine", "(ts, machine)"},
	{"logs_ts_service_severity", "(ts, service, severity)"},
}

// sqliteRowsPerInsert is the rows of one multi-row INSERT in bulk writes
// (6 parameters a row, under SQLite's limit of 32766).
const sqliteRowsPerInsert = 500

// sqliteStore keeps records in logs(id INTEGER PRIMARY KEY, ts, machine,
// service, severity, message). SQLite has no replicas: its view is the store
// itself, and every answer comes from the "primary". Search matches the word
// between spaces with LIKE (SQLite has no index for that).
type sqliteStore struct {
	db                     *sql.DB
	insertOne, insertN     *sql.Stmt
	readStmt, countAStmt   *sql.Stmt
	countBStmt, countCStmt *sql.Stmt
	errorsStmt, searchStmt *sql.Stmt
	stmts                  []*sql.Stmt
	writeMu                sync.Mutex // one bulk transaction at a time: SQLite has one writer
}

func openSQLite(ctx context.Context, env scenario.Env, recreate bool) (store, error) {
	c, err := kit.AsConn[*sqlite.Conn](env)
	if err != nil {
		return nil, err
	}
	if err := c.Claim(ctx, table); err != nil { // before anything is written
		return nil, err
	}
	s := &sqliteStore{db: c.DB()}
	if err := s.prepare(ctx, recreate); err != nil {
		s.close()
		return nil, err
	}
	if err := c.MarkTables(ctx, table); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *sqliteStore) prepare(ctx context.Context, recreate bool) error {
	if recreate {
		if _, err := s.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+table); err != nil {
			return fmt.Errorf("drop %s: %w", table, err)
		}
	}
	create := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL,
		machine VARCHAR(%d) NOT NULL, service VARCHAR(%d) NOT NULL, severity INTEGER NOT NULL, message VARCHAR(%d) NOT NULL)`,
		table, MaxMachineLen, MaxServiceLen, MessageLen)
	if _, err := s.db.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("create %s: %w", table, err)
	}
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		if st, err = s.db.PrepareContext(ctx, q); err != nil {
			err = fmt.Errorf("prepare %q: %w", q, err)
			return nil
		}
		s.stmts = append(s.stmts, st)
		return st
	}
	insert := "INSERT INTO " + table + " (id, ts, machine, service, severity, message) VALUES "
	row := "(?, ?, ?, ?, ?, ?)"
	s.insertOne = prep(insert + row)
	s.insertN = prep(insert + row + strings.Repeat(", "+row, sqliteRowsPerInsert-1))
	s.readStmt = prep("SELECT ts, machine, service, severity, message FROM " + table + " WHERE id = ?")
	s.countAStmt = prep("SELECT count(*) FROM " + table + " WHERE ts = ?")
	s.countBStmt = prep("SELECT count(*) FROM " + table + " WHERE ts = ? AND machine = ?")
	s.countCStmt = prep("SELECT count(*) FROM " + table + " WHERE ts = ? AND service = ? AND severity = ?")
	s.errorsStmt = prep("SELECT machine, count(*) FROM " + table + " WHERE ts BETWEEN ? AND ? AND severity <= ? GROUP BY machine")
	s.searchStmt = prep("SELECT count(*) FROM " + table + " WHERE message LIKE '% ' || ? || ' %'")
	return err
}

func appendRow(args []any, r *Record) []any {
	return append(args, r.ID, r.Timestamp, r.Machine, r.Service, r.Severity, r.Message)
}

func (s *sqliteStore) insert(ctx context.Context, r *Record) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_, err := s.insertOne.ExecContext(ctx, appendRow(make([]any, 0, 6), r)...)
	return err
}

// insertBatch writes rs in one transaction of multi-row INSERTs.
func (s *sqliteStore) insertBatch(ctx context.Context, rs []Record) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	many, one := tx.StmtContext(ctx, s.insertN), tx.StmtContext(ctx, s.insertOne)
	args := make([]any, 0, 6*sqliteRowsPerInsert)
	i := 0
	for ; i+sqliteRowsPerInsert <= len(rs); i += sqliteRowsPerInsert {
		args = args[:0]
		for j := i; j < i+sqliteRowsPerInsert; j++ {
			args = appendRow(args, &rs[j])
		}
		if _, err := many.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	for ; i < len(rs); i++ {
		if _, err := one.ExecContext(ctx, appendRow(args[:0], &rs[i])...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *sqliteStore) finishLoad(ctx context.Context, indexes bool) error {
	for _, ix := range sqlIndexes {
		q := fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s %s", ix[0], table, ix[1])
		if !indexes {
			q = "DROP INDEX IF EXISTS " + ix[0]
		}
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if _, err := s.db.ExecContext(ctx, "ANALYZE "+table); err != nil {
		return fmt.Errorf("analyze %s: %w", table, err)
	}
	return nil
}

func (s *sqliteStore) existing(ctx context.Context) (int64, int64, error) {
	var n, next int64
	err := s.db.QueryRowContext(ctx, "SELECT count(*), COALESCE(max(id) + 1, 0) FROM "+table+" WHERE id >= 0").Scan(&n, &next)
	return n, next, err
}

func (s *sqliteStore) deleteFresh(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, "DELETE FROM "+table+" WHERE id < 0")
	return err
}

func (s *sqliteStore) newView() view { return s }

func (s *sqliteStore) wrote() {}

func (s *sqliteStore) read(ctx context.Context, id int64, r *Record) (bool, bool, error) {
	err := s.readStmt.QueryRowContext(ctx, id).Scan(&r.Timestamp, &r.Machine, &r.Service, &r.Severity, &r.Message)
	if err == sql.ErrNoRows {
		return false, true, nil
	}
	if err != nil {
		return false, true, err
	}
	r.ID = id
	return true, true, nil
}

func (s *sqliteStore) count(ctx context.Context, st *sql.Stmt, args ...any) (int64, bool, error) {
	var n int64
	err := st.QueryRowContext(ctx, args...).Scan(&n)
	return n, true, err
}

func (s *sqliteStore) countA(ctx context.Context, ts int64) (int64, bool, error) {
	return s.count(ctx, s.countAStmt, ts)
}

func (s *sqliteStore) countB(ctx context.Context, ts int64, machine string) (int64, bool, error) {
	return s.count(ctx, s.countBStmt, ts, machine)
}

func (s *sqliteStore) countC(ctx context.Context, ts int64, service string, severity int) (int64, bool, error) {
	return s.count(ctx, s.countCStmt, ts, service, severity)
}

func (s *sqliteStore) search(ctx context.Context, word string) (int64, bool, error) {
	return s.count(ctx, s.searchStmt, word)
}

func (s *sqliteStore) countVisible(ctx context.Context, ts int64) (int64, error) {
	n, _, err := s.count(ctx, s.countAStmt, ts)
	return n, err
}

func (s *sqliteStore) errorsPerHost(ctx context.Context, from, to int64, maxSeverity int, out map[string]int64) (bool, error) {
	rows, err := s.errorsStmt.QueryContext(ctx, from, to, maxSeverity)
	if err != nil {
		return true, err
	}
	defer rows.Close()
	return true, scanHostCounts(rows, out)
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
