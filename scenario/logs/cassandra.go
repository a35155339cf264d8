package logs

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"errors"
	"fmt"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[cassandra.Name] = openCassandra }

// cassandraName is the engine whose store keeps query tables
// (logs.query_tables).
const cassandraName = cassandra.Name

// How the Cassandra store answers the counts, chosen at open from
// logs.indexes and logs.query_tables.
const (
	// casIndexed: storage-attached (SAI) indexes on ts, machine, service,
	// severity and the message's words; counts restrict several indexed
	// columns at once.
	casIndexed = iota
	// casTables: no secondary index; query tables kept at write time (a
	// logged batch with the base row, logs.query_tables=true):
	// logs_by_ts ((ts), machine, id) for count_a, count_b and
	// errors_per_host, logs_by_ts_svc ((ts), service, severity, id) for
	// count_c. search reads the words column page by page and matches in
	// the client.
	casTables
	// casFilter: the study's Cassandra without secondary indexes, a bare
	// table (each write one statement); the counts are ALLOW FILTERING
	// scans of it, the only way CQL answers them.
	casFilter
)

// casIndexedColumns are the columns logs.indexes indexes (the study's
// four fields, plus the message's words for search).
var casIndexedColumns = []string{"ts", "machine", "service", "severity", "words"}

// casStore keeps records in logs (id bigint PRIMARY KEY, ts, machine,
// service, severity, message, words set<text>): words holds the message's
// space-separated words, what CQL can match (CONTAINS) where it has no full
// text search. Freshness probe records (negative ids) are also listed in
// logs_fresh so that deleteFresh finds them without a scan. logs_meta
// remembers whether the query tables hold every record.
type casStore struct {
	c                                         *cassandra.Conn
	mode                                      int
	strong                                    bool
	logs                                      string
	insert1, insertTS, insertSvc, insertFresh string
}

func openCassandra(ctx context.Context, env scenario.Env, recreate bool) (store, error) {
	c, err := kit.AsConn[*cassandra.Conn](env)
	if err != nil {
		return nil, err
	}
	s := &casStore{c: c, strong: c.Strong(), logs: c.Table("logs")}
	switch {
	case env.Settings.Get(KeyIndexes).Bool():
		s.mode = casIndexed
	case env.Settings.Get(KeyQueryTables).Bool():
		s.mode = casTables
	default:
		s.mode = casFilter
	}
	s.insert1 = "INSERT INTO " + s.logs + " (id, ts, machine, service, severity, message, words) VALUES (?, ?, ?, ?, ?, ?, ?)"
	s.insertTS = "INSERT INTO " + c.Table("logs_by_ts") + " (ts, machine, id, service, severity) VALUES (?, ?, ?, ?, ?)"
	s.insertSvc = "INSERT INTO " + c.Table("logs_by_ts_svc") + " (ts, service, severity, id, machine) VALUES (?, ?, ?, ?, ?)"
	s.insertFresh = "INSERT INTO " + c.Table("logs_fresh") + " (b, id, ts) VALUES (0, ?, ?)"
	tables := [][2]string{
		{"logs", "id bigint PRIMARY KEY, ts bigint, machine text, service text, severity int, message text, words set<text>"},
		{"logs_by_ts", "ts bigint, machine text, id bigint, service text, severity int, PRIMARY KEY ((ts), machine, id)"},
		{"logs_by_ts_svc", "ts bigint, service text, severity int, id bigint, machine text, PRIMARY KEY ((ts), service, severity, id)"},
		{"logs_fresh", "b int, id bigint, ts bigint, PRIMARY KEY ((b), id)"},
		{"logs_meta", "k text PRIMARY KEY, v text"},
	}
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t[0]
	}
	if err := c.Claim(ctx, names...); err != nil {
		return nil, err
	}
	for _, t := range tables {
		if recreate {
			if err := c.DropTable(ctx, t[0]); err != nil {
				return nil, err
			}
		}
		if err := c.CreateTable(ctx, t[0], t[1]); err != nil {
			return nil, err
		}
	}
	// The query tables hold every record only if every write since the
	// table was created kept them: a fresh table in casTables mode.
	switch {
	case recreate && s.mode == casTables:
		err = s.setMeta(ctx, "complete")
	case s.mode != casTables:
		err = s.setMeta(ctx, "stale")
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *casStore) setMeta(ctx context.Context, v string) error {
	err := s.c.Write("INSERT INTO "+s.c.Table("logs_meta")+" (k, v) VALUES ('query_tables', ?)", v).ExecContext(ctx)
	if err != nil {
		return fmt.Errorf("logs_meta: %w", err)
	}
	return nil
}

// messageWords returns the distinct space-separated words of a message.
func messageWords(msg string) []string {
	f := strings.Fields(msg)
	seen := make(map[string]bool, len(f))
	out := f[:0]
	for _, w := range f {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func (s *casStore) baseRow(r *Record) []any {
	return []any{r.ID, r.Timestamp, r.Machine, r.Service, r.Severity, r.Message, messageWords(r.Message)}
}

// insert writes one record: with query tables, one logged batch of the
// base row and its query-table rows (applied together or, after a
// coordinator failure, replayed from the batch log).
func (s *casStore) insert(ctx context.Context, r *Record) error {
	fresh := r.ID < 0
	if s.mode != casTables && !fresh {
		return s.c.Write(s.insert1, s.baseRow(r)...).ExecContext(ctx)
	}
	b := s.c.Session().Batch(gocql.LoggedBatch).Consistency(s.c.Options().WriteConsistency)
	b.Query(s.insert1, s.baseRow(r)...)
	if s.mode == casTables {
		b.Query(s.insertTS, r.Timestamp, r.Machine, r.ID, r.Service, r.Severity)
		b.Query(s.insertSvc, r.Timestamp, r.Service, r.Severity, r.ID, r.Machine)
	}
	if fresh {
		b.Query(s.insertFresh, r.ID, r.Timestamp)
	}
	return b.ExecContext(ctx)
}

// insertBatch writes rs in unlogged batches of cassandra.batch_size rows
// per table.
func (s *casStore) insertBatch(ctx context.Context, rs []Record) error {
	base := make([][]any, len(rs))
	var fresh [][]any
	for i := range rs {
		base[i] = s.baseRow(&rs[i])
		if rs[i].ID < 0 {
			fresh = append(fresh, []any{rs[i].ID, rs[i].Timestamp})
		}
	}
	if err := s.c.WriteBatch(ctx, s.insert1, base); err != nil {
		return err
	}
	if len(fresh) > 0 {
		if err := s.c.WriteBatch(ctx, s.insertFresh, fresh); err != nil {
			return err
		}
	}
	if s.mode == casTables {
		return s.writeQueryTables(ctx, rs)
	}
	return nil
}

func (s *casStore) writeQueryTables(ctx context.Context, rs []Record) error {
	byTS, bySvc := make([][]any, len(rs)), make([][]any, len(rs))
	for i := range rs {
		r := &rs[i]
		byTS[i] = []any{r.Timestamp, r.Machine, r.ID, r.Service, r.Severity}
		bySvc[i] = []any{r.Timestamp, r.Service, r.Severity, r.ID, r.Machine}
	}
	if err := s.c.WriteBatch(ctx, s.insertTS, byTS); err != nil {
		return err
	}
	return s.c.WriteBatch(ctx, s.insertSvc, bySvc)
}

// finishLoad creates the SAI indexes (casIndexed) or drops them; in
// casTables mode it fills the query tables from the base table when they
// miss records (written in another mode).
func (s *casStore) finishLoad(ctx context.Context, indexes bool) error {
	for _, col := range casIndexedColumns {
		var err error
		if indexes && s.mode == casIndexed {
			err = s.c.CreateIndex(ctx, "logs", col)
		} else {
			err = s.c.DropIndex(ctx, "logs", col)
		}
		if err != nil {
			return err
		}
	}
	if s.mode != casTables {
		return nil
	}
	var state string
	err := s.c.Read("SELECT v FROM "+s.c.Table("logs_meta")+" WHERE k = 'query_tables'").ScanContext(ctx, &state)
	if err != nil && !errors.Is(err, gocql.ErrNotFound) {
		return fmt.Errorf("logs_meta: %w", err)
	}
	if state == "complete" {
		return nil
	}
	for _, t := range []string{"logs_by_ts", "logs_by_ts_svc"} {
		if err := s.c.Truncate(ctx, t); err != nil {
			return err
		}
	}
	iter := s.c.Read("SELECT id, ts, machine, service, severity FROM " + s.logs).PageSize(5000).IterContext(ctx)
	var batch []Record
	var r Record
	for iter.Scan(&r.ID, &r.Timestamp, &r.Machine, &r.Service, &r.Severity) {
		batch = append(batch, r)
		if len(batch) == 5000 {
			if err := s.writeQueryTables(ctx, batch); err != nil {
				iter.Close()
				return fmt.Errorf("fill the query tables: %w", err)
			}
			batch = batch[:0]
		}
	}
	if err := iter.Close(); err != nil {
		return fmt.Errorf("fill the query tables: %w", err)
	}
	if err := s.writeQueryTables(ctx, batch); err != nil {
		return fmt.Errorf("fill the query tables: %w", err)
	}
	return s.setMeta(ctx, "complete")
}

// existing pages through the ids (CQL has no cheap count or max over a
// table; this runs once, when a run starts on existing data).
func (s *casStore) existing(ctx context.Context) (int64, int64, error) {
	iter := s.c.Read("SELECT id FROM " + s.logs).PageSize(5000).IterContext(ctx)
	var n, next, id int64
	for iter.Scan(&id) {
		if id >= 0 {
			n++
			next = max(next, id+1)
		}
	}
	if err := iter.Close(); err != nil {
		return 0, 0, fmt.Errorf("count logs: %w", err)
	}
	return n, next, nil
}

// deleteFresh deletes the records logs_fresh lists, and their timestamps'
// partitions of the query tables (each probe has a timestamp of its own).
func (s *casStore) deleteFresh(ctx context.Context) error {
	iter := s.c.Read("SELECT id, ts FROM " + s.c.Table("logs_fresh") + " WHERE b = 0").PageSize(5000).IterContext(ctx)
	var ids [][]any
	tss := map[int64]bool{}
	var id, ts int64
	for iter.Scan(&id, &ts) {
		ids = append(ids, []any{id})
		tss[ts] = true
	}
	if err := iter.Close(); err != nil {
		return fmt.Errorf("list probe records: %w", err)
	}
	if err := s.c.WriteBatch(ctx, "DELETE FROM "+s.logs+" WHERE id = ?", ids); err != nil {
		return fmt.Errorf("delete probe records: %w", err)
	}
	for ts := range tss {
		for _, t := range []string{"logs_by_ts", "logs_by_ts_svc"} {
			if err := s.c.Write("DELETE FROM "+s.c.Table(t)+" WHERE ts = ?", ts).ExecContext(ctx); err != nil {
				return fmt.Errorf("delete probe records: %w", err)
			}
		}
	}
	if err := s.c.Write("DELETE FROM " + s.c.Table("logs_fresh") + " WHERE b = 0").ExecContext(ctx); err != nil {
		return fmt.Errorf("delete probe records: %w", err)
	}
	return nil
}

func (s *casStore) newView() view { return (*casView)(s) }

func (s *casStore) close() error { return nil }

// casView answers queries; every view shares the session. Answers are
// "primary" (they see every acknowledged write) when the read and write
// consistency levels overlap (cassandra.Conn.Strong).
type casView casStore

func (v *casView) wrote() {}

func (v *casView) read(ctx context.Context, id int64, r *Record) (bool, bool, error) {
	err := v.c.Read("SELECT ts, machine, service, severity, message FROM "+v.logs+" WHERE id = ?", id).
		ScanContext(ctx, &r.Timestamp, &r.Machine, &r.Service, &r.Severity, &r.Message)
	if errors.Is(err, gocql.ErrNotFound) {
		return false, v.strong, nil
	}
	if err != nil {
		return false, v.strong, err
	}
	r.ID = id
	return true, v.strong, nil
}

// count runs a count(*) query.
func (v *casView) count(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	err := v.c.Read(q, args...).ScanContext(ctx, &n)
	return n, err
}

// filtered appends ALLOW FILTERING in casFilter mode.
func (v *casView) filtered(q string) string {
	if v.mode == casFilter {
		return q + " ALLOW FILTERING"
	}
	return q
}

func (v *casView) countA(ctx context.Context, ts int64) (int64, bool, error) {
	q := "SELECT count(*) FROM " + v.logs + " WHERE ts = ?"
	if v.mode == casTables {
		q = "SELECT count(*) FROM " + v.c.Table("logs_by_ts") + " WHERE ts = ?"
	}
	n, err := v.count(ctx, v.filtered(q), ts)
	return n, v.strong, err
}

func (v *casView) countB(ctx context.Context, ts int64, machine string) (int64, bool, error) {
	q := "SELECT count(*) FROM " + v.logs + " WHERE ts = ? AND machine = ?"
	if v.mode == casTables {
		q = "SELECT count(*) FROM " + v.c.Table("logs_by_ts") + " WHERE ts = ? AND machine = ?"
	}
	n, err := v.count(ctx, v.filtered(q), ts, machine)
	return n, v.strong, err
}

func (v *casView) countC(ctx context.Context, ts int64, service string, severity int) (int64, bool, error) {
	q := "SELECT count(*) FROM " + v.logs + " WHERE ts = ? AND service = ? AND severity = ?"
	if v.mode == casTables {
		q = "SELECT count(*) FROM " + v.c.Table("logs_by_ts_svc") + " WHERE ts = ? AND service = ? AND severity = ?"
	}
	n, err := v.count(ctx, v.filtered(q), ts, service, severity)
	return n, v.strong, err
}

func (v *casView) countVisible(ctx context.Context, ts int64) (int64, error) {
	n, _, err := v.countA(ctx, ts)
	return n, err
}

// errorsPerHost: with indexes or filtering one range query on the base
// table; with query tables the timestamps' partitions of logs_by_ts (an IN
// list), severities filtered in the client.
func (v *casView) errorsPerHost(ctx context.Context, from, to int64, maxSeverity int, out map[string]int64) (bool, error) {
	var iter *gocql.Iter
	if v.mode == casTables {
		var tss []int64
		for ts := from; ts <= to; ts += TimestampStep {
			tss = append(tss, ts)
		}
		iter = v.c.Read("SELECT machine, severity FROM "+v.c.Table("logs_by_ts")+" WHERE ts IN ?", tss).PageSize(5000).IterContext(ctx)
	} else {
		q := v.filtered("SELECT machine, severity FROM " + v.logs + " WHERE ts >= ? AND ts <= ? AND severity <= ?")
		iter = v.c.Read(q, from, to, maxSeverity).PageSize(5000).IterContext(ctx)
	}
	var m string
	var sev int
	for iter.Scan(&m, &sev) {
		if sev <= maxSeverity {
			out[m]++
		}
	}
	return v.strong, iter.Close()
}

// search counts records whose words hold word: through the SAI index on
// words, with ALLOW FILTERING, or (query tables) by reading every
// record's words.
func (v *casView) search(ctx context.Context, word string) (int64, bool, error) {
	if v.mode != casTables {
		n, err := v.count(ctx, v.filtered("SELECT count(*) FROM "+v.logs+" WHERE words CONTAINS ?"), word)
		return n, v.strong, err
	}
	iter := v.c.Read("SELECT words FROM " + v.logs).PageSize(5000).IterContext(ctx)
	var n int64
	var ws []string
	for iter.Scan(&ws) {
		for _, w := range ws {
			if w == word {
				n++
				break
			}
		}
		ws = ws[:0]
	}
	return n, v.strong, iter.Close()
}
