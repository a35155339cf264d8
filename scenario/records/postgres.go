package records

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
)

// On PostgreSQL the site's reads follow postgres.read_from: each web
// session (cookie) has its own router, so that with read_from=replicas its
// reads go to a replica except within the read-your-writes window after
// its own writes, as Rails' automatic role switching does.

func init() { openers[postgres.Name] = openPostgres }

type pgDB struct{ c *postgres.Conn }

// openPostgres opens the store after the engine's Claim of the tables:
// tables of their names scalelab did not create are refused before the
// run writes anything.
func openPostgres(ctx context.Context, env scenario.Env, _ struct{}) (db, error) {
	c, err := kit.AsConn[*postgres.Conn](env)
	if err != nil {
		return nil, err
	}
	if err := c.Claim(ctx, tables...); err != nil {
		return nil, err
	}
	return &pgDB{c: c}, nil
}

func (d *pgDB) dialect() string { return "postgres" }
func (d *pgDB) close()          {}

// newReader gives a web session its own router.
func (d *pgDB) newReader() *reader { return &reader{route: d.c.NewRouter()} }

// wrote starts the session's read-your-writes window.
func (d *pgDB) wrote(r *reader) {
	if r != nil {
		if rt, ok := r.route.(*postgres.Router); ok {
			rt.Wrote()
		}
	}
}

func (d *pgDB) pool(r *reader) *pgxpool.Pool {
	if r != nil {
		if rt, ok := r.route.(*postgres.Router); ok {
			p, _ := rt.Reader()
			return p
		}
	}
	return d.c.Primary()
}

func (d *pgDB) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := d.c.Primary().Exec(ctx, rebind(q), args...)
	return tag.RowsAffected(), err
}

func (d *pgDB) queryRow(ctx context.Context, r *reader, q string, args ...any) row {
	return d.pool(r).QueryRow(ctx, rebind(q), args...)
}

func (d *pgDB) query(ctx context.Context, r *reader, q string, args ...any) (rows, error) {
	rs, err := d.pool(r).Query(ctx, rebind(q), args...)
	if err != nil {
		return nil, err
	}
	return pgRows{rs}, nil
}

func (d *pgDB) tx(ctx context.Context, fn func(t txn) error) error {
	return pgx.BeginFunc(ctx, d.c.Primary(), func(tx pgx.Tx) error { return fn(pgTx{tx}) })
}

func (d *pgDB) schema(ctx context.Context, stmts []string) error {
	for _, s := range stmts {
		if _, err := d.c.Primary().Exec(ctx, s); err != nil {
			return err
		}
	}
	return d.c.MarkTables(ctx, tables...)
}

type pgRows struct{ pgx.Rows }

func (r pgRows) Close() { r.Rows.Close() }

type pgTx struct{ tx pgx.Tx }

func (t pgTx) exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, rebind(q), args...)
	return tag.RowsAffected(), err
}

func (t pgTx) queryRow(ctx context.Context, q string, args ...any) row {
	return t.tx.QueryRow(ctx, rebind(q), args...)
}
