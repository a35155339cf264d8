package logs

import (
	"context"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/postgres/pgtest"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

// TestMain starts the PostgreSQL cluster the package's tests share (a
// primary and one replica, a fresh database per test through the postgres
// test provider).
func TestMain(m *testing.M) { pgtest.Main(m, 1, func(*pgtest.Cluster) {}) }

func init() {
	testEngines[postgres.Name] = &testEngine{
		exec: func(t *testing.T, c engine.Conn, stmts ...string) {
			pc := c.(*postgres.Conn)
			for _, s := range stmts {
				if _, err := pc.Primary().Exec(context.Background(), s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			if err := pc.WaitReplicas(context.Background()); err != nil {
				t.Fatal(err)
			}
		},
		settle: func(t *testing.T, c engine.Conn) {
			if err := c.(*postgres.Conn).WaitReplicas(context.Background()); err != nil {
				t.Fatal(err)
			}
		},
		lags: func(set *setting.Set) bool { return set.Get(postgres.KeyReadFrom).String() == "replicas" },
		variants: [][]string{
			{"postgres.read_from=replicas"},
			{"postgres.copy=false", "postgres.prepared=false", "postgres.synchronous_commit=off"},
		},
	}
}

// TestPostgresReplicaReads shows reads going to the replica: with the
// replica's replay paused, a user who wrote reads the primary (read your
// writes) while another user's reads and counts come from the replica and
// miss the new record (not_found, counts within the ground truth's
// bounds), and a freshness probe cannot complete until replay resumes.
func TestPostgresReplicaReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openEnv(t, postgres.Name, "postgres.read_from=replicas", "postgres.ryw_window=1h")
	w := e.workload(t, append([]string{"logs.records=1000"}, smallProbe...)...)
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	pc := e.conn.(*postgres.Conn)
	replica := pc.Replicas()[0]
	if _, err := replica.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if _, err := replica.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer resume()

	writer, other := w.newSession(1), w.newSession(2)
	writer.op, writer.prepared = OpWrite, true
	if err := writer.Do(ctx); err != nil {
		t.Fatal(err)
	}
	id := w.ids.prefix.Load() - 1
	for _, c := range []struct {
		s       *Session
		found   bool
		primary bool
	}{{writer, true, true}, {other, false, false}} {
		var r Record
		found, primary, err := c.s.v.read(ctx, id, &r)
		if err != nil || found != c.found || primary != c.primary {
			t.Errorf("read of the new record: found %t primary %t %v; want found %t primary %t", found, primary, err, c.found, c.primary)
		}
	}
	other.op, other.id, other.prepared = OpRead, id, true
	if err := other.Do(ctx); metrics.ClassOf(err) != metrics.NotFound {
		t.Errorf("another user's read of a record the replica lacks: %v, want not_found", err)
	}
	// Counts on the replica still lack the record: within the bounds.
	a := int(id % NumTimestamps)
	other.Next()
	other.op, other.a, other.prepared = OpCountA, a, true
	other.lo, other.loBase = CountA(a, w.ids.prefix.Load()), CountA(a, w.base)
	if err := other.Do(ctx); err != nil {
		t.Errorf("count on the lagging replica: %v", err)
	}
	if n, primary, _ := other.v.countA(ctx, Timestamp(a)); primary || n != CountA(a, w.base) {
		t.Errorf("count_a on the replica = %d (primary %t), want %d from the replica", n, primary, CountA(a, w.base))
	}

	// A probe cannot see its records on a paused replica.
	w.cfg.freshMax = 3
	s := w.newSession(3)
	s.op, s.prepared = OpFreshnessWrite, true
	if err := s.Do(ctx); err != nil {
		t.Fatal(err)
	}
	s.Next()
	if err := s.Do(ctx); metrics.ClassOf(err) != metrics.Timeout {
		t.Fatalf("probe on a paused replica: %v, want a timeout", err)
	}
	resume()
	w.cfg.freshMax = 500
	freshnessProbe(t, s)
	f := w.Report()["freshness"].(map[string]any)
	if f["probes"] != 1 || f["failed_probes"] != 1 {
		t.Errorf("report: %v", f)
	}
}

// TestPostgresLoadFalseChecksPrefix refuses a table that is not a
// contiguous prefix of generated records.
func TestPostgresLoadFalseChecksPrefix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openEnv(t, postgres.Name)
	w := e.workload(t, "logs.records=200")
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	e.te.exec(t, e.conn, "DELETE FROM logs WHERE id = 50")
	_, err := e.open("logs.load=false")
	if err == nil || !strings.Contains(err.Error(), "contiguous prefix") {
		t.Fatalf("load=false over a table with a hole: %v", err)
	}
}
