package records

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
)

func init() { openers[sqlite.Name] = openSQLite }

// sqliteDB runs the site's SQL on the embedded SQLite file.
type sqliteDB struct {
	c  *sqlite.Conn
	db *sql.DB
}

// openSQLite opens the store after the engine's Claim of the tables:
// tables of their names scalelab did not create are refused before the
// run writes anything.
func openSQLite(ctx context.Context, env scenario.Env, _ struct{}) (db, error) {
	c, err := kit.AsConn[*sqlite.Conn](env)
	if err != nil {
		return nil, err
	}
	if err := c.Claim(ctx, tables...); err != nil {
		return nil, err
	}
	return &sqliteDB{c: c, db: c.DB()}, nil
}

func (d *sqliteDB) dialect() string    { return "sqlite" }
func (d *sqliteDB) close()             {}
func (d *sqliteDB) newReader() *reader { return nil }
func (d *sqliteDB) wrote(*reader)      {}

func (d *sqliteDB) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := d.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (d *sqliteDB) queryRow(ctx context.Context, _ *reader, q string, args ...any) row {
	return d.db.QueryRowContext(ctx, q, args...)
}

func (d *sqliteDB) query(ctx context.Context, _ *reader, q string, args ...any) (rows, error) {
	rs, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rs}, nil
}

func (d *sqliteDB) tx(ctx context.Context, fn func(t txn) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if err := fn(sqlTx{tx}); err != nil {
		return err
	}
	return tx.Commit()
}

func (d *sqliteDB) schema(ctx context.Context, stmts []string) error {
	for _, s := range stmts {
		if _, err := d.db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return d.c.MarkTables(ctx, tables...)
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t sqlTx) queryRow(ctx context.Context, q string, args ...any) row {
	return t.tx.QueryRowContext(ctx, q, args...)
}

// notFound makes "no rows" errNoUser.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return errNoUser
	}
	return err
}
