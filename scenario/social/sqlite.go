package social

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[sqlite.Name] = openSQLite }

// sqlTable is the users collection in the SQL engines.
const sqlTable = "social_users"

// sqliteRowsPerInsert is the rows of one multi-row INSERT when loading.
const sqliteRowsPerInsert = 500

// sqliteStore keeps each user as a JSON document: social_users(id TEXT
// PRIMARY KEY, doc TEXT), the document store of the study on SQLite.
// Updates merge the changed fields into the document with json_patch.
type sqliteStore struct {
	db                                      *sql.DB
	readQ, scanQ, updateQ, insertQ, deleteQ *sql.Stmt
	insertN                                 *sql.Stmt
	stmts                                   []*sql.Stmt
	loadMu                                  sync.Mutex // one load transaction at a time: SQLite has one writer
}

func openSQLite(ctx context.Context, env scenario.Env, cfg *config) (store, error) {
	c, err := asConn[*sqlite.Conn](env)
	if err != nil {
		return nil, err
	}
	s := &sqliteStore{db: c.DB()}
	if err := s.prepare(ctx, cfg.load); err != nil {
		s.close()
		return nil, fmt.Errorf("social on %s: %w", env.Engine, err)
	}
	return s, nil
}

func (s *sqliteStore) prepare(ctx context.Context, recreate bool) error {
	if recreate {
		if _, err := s.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+sqlTable); err != nil {
			return fmt.Errorf("drop %s: %w", sqlTable, err)
		}
	}
	if _, err := s.db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+sqlTable+" (id TEXT PRIMARY KEY, doc TEXT NOT NULL)"); err != nil {
		return fmt.Errorf("create %s: %w", sqlTable, err)
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
	s.readQ = prep("SELECT doc FROM " + sqlTable + " WHERE id = ?")
	s.scanQ = prep("SELECT id, doc FROM " + sqlTable + " WHERE id >= ? ORDER BY id LIMIT ?")
	s.updateQ = prep("UPDATE " + sqlTable + " SET doc = json_patch(doc, ?) WHERE id = ?")
	s.insertQ = prep("INSERT INTO " + sqlTable + " (id, doc) VALUES (?, ?)")
	s.deleteQ = prep("DELETE FROM " + sqlTable + " WHERE id = ?")
	s.insertN = prep("INSERT INTO " + sqlTable + " (id, doc) VALUES (?, ?)" + strings.Repeat(", (?, ?)", sqliteRowsPerInsert-1))
	return err
}

func (s *sqliteStore) read(ctx context.Context, key string, u *User) error {
	var doc []byte
	if err := s.readQ.QueryRowContext(ctx, key).Scan(&doc); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return engine.ErrNotFound
		}
		return sqlite.Classify(ctx, err)
	}
	return decodeUser(key, doc, u)
}

// affected turns an update's or delete's result into engine.ErrNotFound
// when no row matched.
func affected(ctx context.Context, res sql.Result, err error) error {
	if err != nil {
		return sqlite.Classify(ctx, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return engine.ErrNotFound
	}
	return nil
}

func (s *sqliteStore) update(ctx context.Context, key, status string, lastSeen int64) error {
	res, err := s.updateQ.ExecContext(ctx, string(patchDoc(status, lastSeen)), key)
	return affected(ctx, res, err)
}

func (s *sqliteStore) insert(ctx context.Context, u *User) error {
	_, err := s.insertQ.ExecContext(ctx, u.ID, string(u.Doc()))
	return sqlite.Classify(ctx, err)
}

func (s *sqliteStore) remove(ctx context.Context, key string) error {
	res, err := s.deleteQ.ExecContext(ctx, key)
	return affected(ctx, res, err)
}

func (s *sqliteStore) scan(ctx context.Context, start string, n int, fn func(u *User) error) error {
	rows, err := s.scanQ.QueryContext(ctx, start, n)
	if err != nil {
		return sqlite.Classify(ctx, err)
	}
	defer rows.Close()
	var u User
	for rows.Next() {
		var id string
		var doc []byte
		if err := rows.Scan(&id, &doc); err != nil {
			return sqlite.Classify(ctx, err)
		}
		if err := decodeUser(id, doc, &u); err != nil {
			return err
		}
		if err := fn(&u); err != nil {
			return err
		}
	}
	return sqlite.Classify(ctx, rows.Err())
}

// insertBatch inserts users in one transaction, with multi-row INSERTs and
// single-row ones for the rest.
func (s *sqliteStore) insertBatch(ctx context.Context, users []User) error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return sqlite.Classify(ctx, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	many, one := tx.StmtContext(ctx, s.insertN), tx.StmtContext(ctx, s.insertQ)
	args := make([]any, 0, 2*sqliteRowsPerInsert)
	i := 0
	for ; i+sqliteRowsPerInsert <= len(users); i += sqliteRowsPerInsert {
		args = args[:0]
		for r := i; r < i+sqliteRowsPerInsert; r++ {
			args = append(args, users[r].ID, string(users[r].Doc()))
		}
		if _, err := many.ExecContext(ctx, args...); err != nil {
			return sqlite.Classify(ctx, err)
		}
	}
	for ; i < len(users); i++ {
		if _, err := one.ExecContext(ctx, users[i].ID, string(users[i].Doc())); err != nil {
			return sqlite.Classify(ctx, err)
		}
	}
	return sqlite.Classify(ctx, tx.Commit())
}

func (s *sqliteStore) afterLoad(context.Context) error { return nil }

func (s *sqliteStore) count(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM "+sqlTable).Scan(&n)
	return n, sqlite.Classify(ctx, err)
}

func (s *sqliteStore) maxKey(ctx context.Context) (string, error) {
	var k sql.NullString
	err := s.db.QueryRowContext(ctx, "SELECT max(id) FROM "+sqlTable).Scan(&k)
	return k.String, sqlite.Classify(ctx, err)
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
