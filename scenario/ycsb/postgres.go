package ycsb

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[postgres.Name] = openPostgres }

// pgStore keeps records in usertable(YCSB_KEY varchar PRIMARY KEY, FIELD0
// text, ...), as YCSB's JDBC binding does. Keys use the "C" collation so
// that scans run in byte order whatever the database's locale. Writes go to
// the primary; reads to the primary, or with postgres.read_from=replicas to
// the replicas in turn (YCSB has no user identity, so no read-your-writes).
// Statements are prepared once per connection by the engine's pool
// (postgres.prepared).
type pgStore struct {
	c         *postgres.Conn
	nf        int
	prepared  bool
	readAll   string
	readOne   []string // by field
	scanAll   string
	scanOne   []string
	updateAll string
	updateOne []string
	insertOne string
	insertArr string // INSERT ... SELECT FROM unnest of one array per column
	columns   []string
}

func openPostgres(ctx context.Context, env scenario.Env, cfg *config) (store, error) {
	c, err := asConn[*postgres.Conn](env)
	if err != nil {
		return nil, err
	}
	s := &pgStore{c: c, nf: cfg.fields, prepared: c.Options().Prepared}
	cols := make([]string, s.nf)
	defs := make([]string, s.nf)
	for f := range cols {
		cols[f] = fmt.Sprintf("FIELD%d", f)
		defs[f] = cols[f] + " text"
	}
	p := c.Primary()
	if cfg.load {
		if _, err := p.Exec(ctx, "DROP TABLE IF EXISTS usertable"); err != nil {
			return nil, errEngine(env.Engine, fmt.Errorf("drop usertable: %w", err))
		}
	}
	create := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS usertable (YCSB_KEY varchar(255) COLLATE "C" PRIMARY KEY, %s)`, strings.Join(defs, ", "))
	if _, err := p.Exec(ctx, create); err != nil {
		return nil, errEngine(env.Engine, fmt.Errorf("create usertable: %w", err))
	}
	all := strings.Join(cols, ", ")
	s.readAll = "SELECT " + all + " FROM usertable WHERE YCSB_KEY = $1"
	s.scanAll = "SELECT YCSB_KEY, " + all + " FROM usertable WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"
	sets := make([]string, s.nf)
	params := make([]string, s.nf+1)
	arrays := make([]string, s.nf+1)
	params[0], arrays[0] = "$1", "$1::varchar[]"
	for f, col := range cols {
		sets[f] = fmt.Sprintf("%s = $%d", col, f+1)
		params[f+1] = fmt.Sprintf("$%d", f+2)
		arrays[f+1] = fmt.Sprintf("$%d::text[]", f+2)
		s.readOne = append(s.readOne, "SELECT "+col+" FROM usertable WHERE YCSB_KEY = $1")
		s.scanOne = append(s.scanOne, "SELECT YCSB_KEY, "+col+" FROM usertable WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2")
		s.updateOne = append(s.updateOne, "UPDATE usertable SET "+col+" = $1 WHERE YCSB_KEY = $2")
	}
	s.updateAll = fmt.Sprintf("UPDATE usertable SET %s WHERE YCSB_KEY = $%d", strings.Join(sets, ", "), s.nf+1)
	s.insertOne = "INSERT INTO usertable (YCSB_KEY, " + all + ") VALUES (" + strings.Join(params, ", ") + ")"
	s.insertArr = "INSERT INTO usertable (YCSB_KEY, " + all + ") SELECT * FROM unnest(" + strings.Join(arrays, ", ") + ")"
	s.columns = append([]string{"ycsb_key"}, strings.Split(strings.ToLower(all), ", ")...)
	return s, nil
}

func pgClassify(ctx context.Context, err error) error { return postgres.Classify(ctx, err) }

// rawQuery runs a read statement on a connection of p at the wire level
// (pgconn): parameters and results as text bytes, no type mapping, which
// keeps scalelab's own CPU per read low. The statement is prepared once per
// connection under name (postgres.prepared), else sent unprepared. row is
// called with each row's values, valid only during the call.
func (s *pgStore) rawQuery(ctx context.Context, p *pgxpool.Pool, name, sql string, params [][]byte, row func(vals [][]byte)) error {
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

// addRow copies a row's values (key first when key is nil) into res.
func addRow(vals [][]byte, key []byte, field int, res *result) {
	if key == nil {
		key, vals = vals[0], vals[1:]
	}
	i := res.addRow(key)
	for j, v := range vals {
		f := j
		if field >= 0 {
			f = field
		}
		if v != nil {
			res.set(i, f, v)
		}
	}
}

func (s *pgStore) read(ctx context.Context, key []byte, field int, res *result) error {
	return s.readFrom(ctx, s.c.ReadPool(), key, field, res)
}

// readForAudit reads from the primary (auditReader): replicas may still be
// replaying, or be down, when the audit reads back.
func (s *pgStore) readForAudit(ctx context.Context, key []byte, field int, res *result) error {
	return s.readFrom(ctx, s.c.Primary(), key, field, res)
}

func (s *pgStore) readFrom(ctx context.Context, pool *pgxpool.Pool, key []byte, field int, res *result) error {
	name, q := "ycsb_read", s.readAll
	if field >= 0 {
		name, q = "ycsb_read_"+strconv.Itoa(field), s.readOne[field]
	}
	params := [1][]byte{key}
	found := false
	err := s.rawQuery(ctx, pool, name, q, params[:], func(vals [][]byte) {
		found = true
		addRow(vals, key, field, res)
	})
	if err != nil {
		return pgClassify(ctx, err)
	}
	if !found {
		return engine.ErrNotFound
	}
	return nil
}

func (s *pgStore) scan(ctx context.Context, start []byte, n, field int, res *result) error {
	name, q := "ycsb_scan", s.scanAll
	if field >= 0 {
		name, q = "ycsb_scan_"+strconv.Itoa(field), s.scanOne[field]
	}
	var limit [20]byte
	params := [2][]byte{start, strconv.AppendInt(limit[:0], int64(n), 10)}
	err := s.rawQuery(ctx, s.c.ReadPool(), name, q, params[:], func(vals [][]byte) {
		addRow(vals, nil, field, res)
	})
	return pgClassify(ctx, err)
}

func (s *pgStore) update(ctx context.Context, key []byte, field int, vals [][]byte) error {
	var tag pgconn.CommandTag
	var err error
	p := s.c.Primary()
	if field >= 0 {
		tag, err = p.Exec(ctx, s.updateOne[field], string(vals[field]), string(key))
	} else {
		args := make([]any, 0, s.nf+1)
		for _, v := range vals {
			args = append(args, string(v))
		}
		tag, err = p.Exec(ctx, s.updateAll, append(args, string(key))...)
	}
	if err != nil {
		return pgClassify(ctx, err)
	}
	if tag.RowsAffected() == 0 {
		return engine.ErrNotFound
	}
	return nil
}

func (s *pgStore) insert(ctx context.Context, key []byte, vals [][]byte) error {
	_, err := s.c.Primary().Exec(ctx, s.insertOne, appendRecord(make([]any, 0, s.nf+1), key, vals)...)
	return pgClassify(ctx, err)
}

// insertBatch writes b with COPY (postgres.copy), else with one INSERT of
// unnested arrays.
func (s *pgStore) insertBatch(ctx context.Context, b *batch) error {
	p := s.c.Primary()
	if s.c.Options().Copy {
		row := make([]any, 0, s.nf+1)
		n, err := p.CopyFrom(ctx, pgx.Identifier{"usertable"}, s.columns, pgx.CopyFromSlice(b.n, func(i int) ([]any, error) {
			row = appendRecord(row[:0], b.keys[i], b.row(i))
			return row, nil
		}))
		if err == nil && n != int64(b.n) {
			err = fmt.Errorf("COPY wrote %d of %d rows", n, b.n)
		}
		return pgClassify(ctx, err)
	}
	cols := make([][]string, s.nf+1)
	for c := range cols {
		cols[c] = make([]string, b.n)
	}
	for i := range b.n {
		cols[0][i] = string(b.keys[i])
		for f, v := range b.row(i) {
			cols[f+1][i] = string(v)
		}
	}
	args := make([]any, len(cols))
	for c := range cols {
		args[c] = cols[c]
	}
	_, err := p.Exec(ctx, s.insertArr, args...)
	return pgClassify(ctx, err)
}

func (s *pgStore) close() error { return nil }
