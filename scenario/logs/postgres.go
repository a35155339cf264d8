package logs

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[postgres.Name] = openPostgres }

// pgIndexes are the PostgreSQL secondary indexes: the SQL ones plus a GIN
// index on the message's words (the 'simple' text search configuration:
// lower-cased words, no stemming, no stop words).
var pgIndexes = append(append([][2]string{}, sqlIndexes...), [2]string{"logs_message_words", "USING gin (to_tsvector('simple', message))"})

// PostgreSQL statements. Search is full-text: a word of the message.
const (
	pgInsert     = "INSERT INTO logs (id, ts, machine, service, severity, message) VALUES ($1, $2, $3, $4, $5, $6)"
	pgInsertMany = "INSERT INTO logs (id, ts, machine, service, severity, message) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::varchar[], $4::varchar[], $5::smallint[], $6::varchar[])"
	pgRead       = "SELECT ts, machine, service, severity, message FROM logs WHERE id = $1"
	pgCountA     = "SELECT count(*) FROM logs WHERE ts = $1"
	pgCountB     = "SELECT count(*) FROM logs WHERE ts = $1 AND machine = $2"
	pgCountC     = "SELECT count(*) FROM logs WHERE ts = $1 AND service = $2 AND severity = $3"
	pgErrors     = "SELECT machine, count(*) FROM logs WHERE ts BETWEEN $1 AND $2 AND severity <= $3 GROUP BY machine"
	pgSearch     = "SELECT count(*) FROM logs WHERE to_tsvector('simple', message) @@ plainto_tsquery('simple', $1)"
)

var pgColumns = []string{"id", "ts", "machine", "service", "severity", "message"}

// pgStore keeps records in logs(id bigint PRIMARY KEY, ts bigint, machine
// varchar(30), service varchar(30), severity smallint, message
// varchar(255)). Writes go to the primary; each session's view reads
// through a postgres.Router (the primary, or a replica outside the user's
// read-your-writes window).
type pgStore struct {
	c    *postgres.Conn
	copy bool
}

func openPostgres(ctx context.Context, env scenario.Env, recreate bool) (store, error) {
	c, err := kit.AsConn[*postgres.Conn](env)
	if err != nil {
		return nil, err
	}
	p := c.Primary()
	if err := c.Claim(ctx, table); err != nil { // before anything is written
		return nil, err
	}
	if recreate {
		if _, err := p.Exec(ctx, "DROP TABLE IF EXISTS logs"); err != nil {
			return nil, fmt.Errorf("drop logs: %w", err)
		}
	}
	create := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS logs (id bigint PRIMARY KEY, ts bigint NOT NULL,
		machine varchar(%d) NOT NULL, service varchar(%d) NOT NULL, severity smallint NOT NULL, message varchar(%d) NOT NULL)`,
		MaxMachineLen, MaxServiceLen, MessageLen)
	if _, err := p.Exec(ctx, create); err != nil {
		return nil, fmt.Errorf("create logs: %w", err)
	}
	if err := c.MarkTables(ctx, table); err != nil {
		return nil, err
	}
	return &pgStore{c: c, copy: c.Options().Copy}, nil
}

func (s *pgStore) insert(ctx context.Context, r *Record) error {
	_, err := s.c.Primary().Exec(ctx, pgInsert, r.ID, r.Timestamp, r.Machine, r.Service, int16(r.Severity), r.Message)
	return err
}

// insertBatch writes rs with COPY (postgres.copy), else with one INSERT of
// unnested arrays.
func (s *pgStore) insertBatch(ctx context.Context, rs []Record) error {
	p := s.c.Primary()
	if s.copy {
		row := make([]any, len(pgColumns))
		n, err := p.CopyFrom(ctx, pgx.Identifier{"logs"}, pgColumns, pgx.CopyFromSlice(len(rs), func(i int) ([]any, error) {
			r := &rs[i]
			row[0], row[1], row[2], row[3], row[4], row[5] = r.ID, r.Timestamp, r.Machine, r.Service, int16(r.Severity), r.Message
			return row, nil
		}))
		if err == nil && n != int64(len(rs)) {
			err = fmt.Errorf("COPY wrote %d of %d rows", n, len(rs))
		}
		return err
	}
	ids, tss := make([]int64, len(rs)), make([]int64, len(rs))
	ms, svcs, msgs := make([]string, len(rs)), make([]string, len(rs)), make([]string, len(rs))
	sevs := make([]int16, len(rs))
	for i := range rs {
		r := &rs[i]
		ids[i], tss[i], ms[i], svcs[i], sevs[i], msgs[i] = r.ID, r.Timestamp, r.Machine, r.Service, int16(r.Severity), r.Message
	}
	_, err := p.Exec(ctx, pgInsertMany, ids, tss, ms, svcs, sevs, msgs)
	return err
}

// finishLoad creates or drops the indexes, runs ANALYZE, then waits until
// every replica has replayed the primary's WAL as of now.
func (s *pgStore) finishLoad(ctx context.Context, indexes bool) error {
	p := s.c.Primary()
	for _, ix := range pgIndexes {
		q := fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON logs %s", ix[0], ix[1])
		if !indexes {
			q = "DROP INDEX IF EXISTS " + ix[0]
		}
		if _, err := p.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if _, err := p.Exec(ctx, "ANALYZE logs"); err != nil {
		return fmt.Errorf("analyze logs: %w", err)
	}
	return s.c.WaitReplicas(ctx)
}

func (s *pgStore) existing(ctx context.Context) (int64, int64, error) {
	var n, next int64
	err := s.c.Primary().QueryRow(ctx, "SELECT count(*), COALESCE(max(id) + 1, 0) FROM logs WHERE id >= 0").Scan(&n, &next)
	return n, next, err
}

func (s *pgStore) deleteFresh(ctx context.Context) error {
	_, err := s.c.Primary().Exec(ctx, "DELETE FROM logs WHERE id < 0")
	return err
}

func (s *pgStore) newView() view { return &pgView{r: s.c.NewRouter()} }

func (s *pgStore) close() error { return nil }

// pgView is one user's view: reads go where the user's router says.
type pgView struct{ r *postgres.Router }

func (v *pgView) wrote() { v.r.Wrote() }

func (v *pgView) read(ctx context.Context, id int64, r *Record) (bool, bool, error) {
	p, primary := v.r.Reader()
	var sev int16
	err := p.QueryRow(ctx, pgRead, id).Scan(&r.Timestamp, &r.Machine, &r.Service, &sev, &r.Message)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, primary, nil
	}
	if err != nil {
		return false, primary, err
	}
	r.ID, r.Severity = id, int(sev)
	return true, primary, nil
}

func count(ctx context.Context, p *pgxpool.Pool, q string, args ...any) (int64, error) {
	var n int64
	err := p.QueryRow(ctx, q, args...).Scan(&n)
	return n, err
}

func (v *pgView) countA(ctx context.Context, ts int64) (int64, bool, error) {
	p, primary := v.r.Reader()
	n, err := count(ctx, p, pgCountA, ts)
	return n, primary, err
}

func (v *pgView) countB(ctx context.Context, ts int64, machine string) (int64, bool, error) {
	p, primary := v.r.Reader()
	n, err := count(ctx, p, pgCountB, ts, machine)
	return n, primary, err
}

func (v *pgView) countC(ctx context.Context, ts int64, service string, severity int) (int64, bool, error) {
	p, primary := v.r.Reader()
	n, err := count(ctx, p, pgCountC, ts, service, int16(severity))
	return n, primary, err
}

func (v *pgView) search(ctx context.Context, word string) (int64, bool, error) {
	p, primary := v.r.Reader()
	n, err := count(ctx, p, pgSearch, word)
	return n, primary, err
}

func (v *pgView) countVisible(ctx context.Context, ts int64) (int64, error) {
	p, _ := v.r.OthersReader()
	return count(ctx, p, pgCountA, ts)
}

func (v *pgView) errorsPerHost(ctx context.Context, from, to int64, maxSeverity int, out map[string]int64) (bool, error) {
	p, primary := v.r.Reader()
	rows, err := p.Query(ctx, pgErrors, from, to, int16(maxSeverity))
	if err != nil {
		return primary, err
	}
	defer rows.Close()
	return primary, scanHostCounts(rows, out)
}
