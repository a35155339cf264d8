package logs

import (
	"context"
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
// keyspace per test. The default variant covers the
// SAI indexes (logs.indexes=on) and, reopened with indexes off, the query
// tables; the allow_filtering variant covers the ALLOW FILTERING scans.
func init() {
	testEngines[cassandra.Name] = &testEngine{
		exec:     execCassandra,
		lags:     func(set *setting.Set) bool { return false },
		variants: [][]string{{"cassandra.allow_filtering=true", "cassandra.batch_size=7"}},
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
