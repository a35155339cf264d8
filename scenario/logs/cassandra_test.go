package logs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/setting"
)

// Cassandra runs the conformance suite on the provider's shared ring, a
// keyspace per test. The default variant covers the SAI indexes
// (logs.indexes=on) and, reopened with indexes off, the study's bare table
// (ALLOW FILTERING scans); the query_tables variant, reopened with indexes
// off, the query tables written in a batch with each record.
func init() {
	testEngines[cassandra.Name] = &testEngine{
		exec:     execCassandra,
		lags:     func(set *setting.Set) bool { return false },
		variants: [][]string{{"logs.query_tables=true", "cassandra.batch_size=7"}},
	}
}

var casUpdate = regexp.MustCompile(`^UPDATE logs SET (\w+) = '([^']*)' WHERE id = (\d+)$`)

// execCassandra runs the suite's SQL statements as CQL on the keyspace's
// logs table at consistency ALL; a changed message changes its words too.
func execCassandra(t *testing.T, c engine.Conn, stmts ...string) {
	t.Helper()
	cc := c.(*cassandra.Conn)
	for _, s := range stmts {
		q := strings.Replace(s, " logs ", " "+cc.Table("logs")+" ", 1)
		if m := casUpdate.FindStringSubmatch(s); m != nil && m[1] == "message" {
			q = fmt.Sprintf("UPDATE %s SET message = '%s', words = {'%s'} WHERE id = %s", cc.Table("logs"), m[2],
				strings.Join(messageWords(m[2]), "','"), m[3])
		}
		if err := cc.Session().Query(q).Consistency(gocql.All).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestCassandraRing checks what a run on the provider's shared 1-node ring
// records: its node, replication factor 1 (the node count), QUORUM reads
// and writes, Cassandra 5.0, and that reads at QUORUM see every
// acknowledged write. (3-node rings: engine/cassandra's cluster test and the
// fault tests.)
func TestCassandraRing(t *testing.T) {
	t.Parallel()
	e := openEnv(t, cassandra.Name)
	info, err := e.conn.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"nodes": "1", "read_consistency": "QUORUM", "write_consistency": "QUORUM"}
	for k, v := range want {
		if info.Extra[k] != v {
			t.Errorf("info %s = %q, want %q (%v)", k, info.Extra[k], v, info.Extra)
		}
	}
	if !strings.HasPrefix(info.Extra["replication"], "1") || !strings.HasPrefix(info.Version, "5.0") {
		t.Errorf("info: replication %q, version %q", info.Extra["replication"], info.Version)
	}
	if !e.conn.(*cassandra.Conn).Strong() {
		t.Error("QUORUM/QUORUM at RF 1 is not strong")
	}
}

// TestCassandraBareTable: logs.indexes=off without query tables is the
// study's Cassandra without secondary indexes: a write is one row of the
// logs table and nothing else, no index exists, and the counts (ALLOW
// FILTERING scans) are exact. logs.query_tables is refused elsewhere.
func TestCassandraBareTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openEnv(t, cassandra.Name)
	const records = 300
	w := e.workload(t, fmt.Sprint("logs.records=", records), "logs.indexes=off", "logs.mix=write:1", "logs.session_ops=0")
	if err := w.Load(ctx, 2, func(int64) {}); err != nil {
		t.Fatal(err)
	}
	s := w.NewSession(1, 2)
	for range 20 {
		if op, ok := s.Next(); !ok || op != OpWrite {
			t.Fatalf("next: %d %v, want a write", op, ok)
		}
		if err := s.Do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cc := e.conn.(*cassandra.Conn)
	for _, tbl := range []string{"logs_by_ts", "logs_by_ts_svc"} {
		var n int64
		if err := cc.Session().Query("SELECT count(*) FROM " + cc.Table(tbl)).Consistency(gocql.All).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s holds %d rows (%v): a bare table's writes must not keep query tables", tbl, n, err)
		}
	}
	var idx int
	if err := cc.Session().Query("SELECT count(*) FROM system_schema.indexes WHERE keyspace_name = ? AND table_name = 'logs'", cc.Keyspace()).Scan(&idx); err != nil || idx != 0 {
		t.Fatalf("%d indexes on the bare table (%v)", idx, err)
	}
	if n := w.ids.prefix.Load(); n != records+20 {
		t.Fatalf("%d records acknowledged, want %d", n, records+20)
	}
	checkQueries(t, w, records+20)

	other := openEnv(t, "sqlite")
	if _, err := other.open("logs.query_tables=true"); !errors.Is(err, setting.ErrBadValue) || !strings.Contains(err.Error(), KeyQueryTables) {
		t.Fatalf("logs.query_tables on sqlite: %v", err)
	}
}
