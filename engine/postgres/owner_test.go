package postgres_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/postgres/pgtest"
	"github.com/scalelab/scalelab/setting"
)

// ownerDB is a fresh database of the shared test server holding a user's
// table usertable, with one row, in each of schemas.
func ownerDB(t *testing.T, schemas ...string) (*pgtest.Cluster, string) {
	t.Helper()
	pc, err := pgtest.Shared()
	if err != nil {
		t.Fatalf("PostgreSQL test server: %v (install PostgreSQL 15: make setup)", err)
	}
	target := pc.NewDatabase(t)
	db := strings.TrimPrefix(mustURL(t, target).Path, "/")
	for _, s := range schemas {
		if err := pc.Exec(context.Background(), db, "CREATE SCHEMA IF NOT EXISTS "+s,
			"CREATE TABLE "+s+".usertable (id text PRIMARY KEY, note text)",
			"INSERT INTO "+s+".usertable VALUES ('k1', 'the user''s row')"); err != nil {
			t.Fatal(err)
		}
	}
	return pc, target
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// openPG opens the engine on target with the settings, as a run of the
// ycsb scenario would.
func openPG(t *testing.T, pc *pgtest.Cluster, target string, assignments ...string) *postgres.Conn {
	t.Helper()
	set := enginetest.Settings(t, postgres.Name, nil, assignments...)
	return enginetest.OpenEngine(t, postgres.Name, engine.Config{Target: target, Settings: set, Cluster: pc.State, Scenario: "ycsb", Run: "test-run"}).(*postgres.Conn)
}

// userNote reads the user's row of schema.usertable ("" when it is gone).
func userNote(t *testing.T, c *postgres.Conn, schema string) string {
	t.Helper()
	var note string
	_ = c.Primary().QueryRow(context.Background(), "SELECT note FROM "+schema+".usertable WHERE id = 'k1'").Scan(&note)
	return note
}

// comment is the comment of schema.table ("" without one).
func comment(t *testing.T, c *postgres.Conn, schema, table string) string {
	t.Helper()
	var s *string
	if err := c.Primary().QueryRow(context.Background(), "SELECT obj_description(($1 || '.' || $2)::regclass, 'pg_class')", schema, table).Scan(&s); err != nil {
		t.Fatal(err)
	}
	if s == nil {
		return ""
	}
	return *s
}

var ycsbSpec = engine.CollectionSpec{Name: "usertable", Fields: []string{"field0", "field1"}, Recreate: true}

func TestOwnership(t *testing.T) {
	ctx := context.Background()

	t.Run("a user's table in the schema is refused and kept", func(t *testing.T) {
		pc, target := ownerDB(t, "scalelab")
		c := openPG(t, pc, target)
		_, err := c.Collection(ctx, ycsbSpec)
		var ne *engine.NotOwnedError
		if !errors.Is(err, engine.ErrNotOwned) || !errors.Is(err, engine.ErrConfig) || !errors.As(err, &ne) {
			t.Fatalf("Collection over a user's table: %v, want a NotOwnedError", err)
		}
		for _, want := range []string{"table scalelab.usertable", "--set postgres.schema=NAME", "--set postgres.replace_existing=true"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q does not say %q", err, want)
			}
		}
		if got := userNote(t, c, "scalelab"); got != "the user's row" {
			t.Errorf("the user's row after the refusal: %q", got)
		}
	})

	t.Run("replace_existing replaces it, marked", func(t *testing.T) {
		pc, target := ownerDB(t, "scalelab")
		c := openPG(t, pc, target, postgres.KeyReplaceExisting+"=true")
		col, err := c.Collection(ctx, ycsbSpec)
		if err != nil {
			t.Fatalf("with replace_existing: %v", err)
		}
		if n, err := col.Count(ctx); err != nil || n != 0 {
			t.Errorf("the replaced table holds %d rows (%v)", n, err)
		}
		if m := comment(t, c, "scalelab", "usertable"); !engine.IsMark(m) || !strings.Contains(m, "scenario ycsb, run test-run") {
			t.Errorf("the replaced table's comment %q is not scalelab's mark", m)
		}
	})

	t.Run("a table scalelab created is reused", func(t *testing.T) {
		pc, target := ownerDB(t)
		for i, recreate := range []bool{true, false, true} {
			c := openPG(t, pc, target)
			spec := ycsbSpec
			spec.Recreate = recreate
			col, err := c.Collection(ctx, spec)
			if err != nil {
				t.Fatalf("run %d over scalelab's own table: %v", i+1, err)
			}
			if i == 0 {
				b := engine.NewBatch(2, 2)
				b.N = 2
				b.Keys[0], b.Keys[1] = []byte("a"), []byte("b")
				for j := range b.Vals {
					b.Vals[j] = []byte("v")
				}
				if err := col.InsertBatch(ctx, b); err != nil { // COPY, into the schema
					t.Fatal(err)
				}
			}
			if n, _ := col.Count(ctx); i == 1 && n != 2 {
				t.Errorf("the run without recreate sees %d rows, want the earlier run's 2", n)
			}
			c.Close()
		}
	})

	t.Run("another schema proceeds, and public is never touched", func(t *testing.T) {
		pc, target := ownerDB(t, "scalelab", "public")
		c := openPG(t, pc, target, postgres.KeySchema+"=other")
		col, err := c.Collection(ctx, ycsbSpec)
		if err != nil {
			t.Fatalf("postgres.schema=other: %v", err)
		}
		if err := col.Insert(ctx, []byte("k1"), [][]byte{[]byte("x"), []byte("y")}); err != nil {
			t.Fatal(err)
		}
		var rows engine.Rows
		rows.Reset(2)
		if err := col.Get(ctx, []byte("k1"), -1, &rows); err != nil || rows.Len() != 1 { // prepared, in the schema
			t.Fatalf("get: %v (%d rows)", err, rows.Len())
		}
		if !engine.IsMark(comment(t, c, "other", "usertable")) {
			t.Error("other.usertable is not marked")
		}
		for _, s := range []string{"scalelab", "public"} {
			if got := userNote(t, c, s); got != "the user's row" {
				t.Errorf("%s.usertable after a run in schema other: %q", s, got)
			}
		}
	})

	t.Run("replicas read the schema", func(t *testing.T) {
		pc, target := ownerDB(t)
		host := mustURL(t, target).Host
		if _, _, err := net.SplitHostPort(host); err != nil {
			t.Fatal(err)
		}
		// the primary stands in for a replica: what matters is the pool's session
		c := openPG(t, pc, target, postgres.KeySchema+"=other", postgres.KeyReplicas+"="+host, postgres.KeyReadFrom+"=replicas")
		for _, p := range append(c.Replicas(), c.Primary()) {
			var sp string
			if err := p.QueryRow(ctx, "SHOW search_path").Scan(&sp); err != nil || sp != "other" {
				t.Errorf("search_path %q (%v), want other", sp, err)
			}
		}
	})

	t.Run("the schema must be a plain identifier", func(t *testing.T) {
		e, _ := engine.Lookup(postgres.Name)
		set := setting.NewSet(e.Settings()...)
		err := set.Apply(postgres.KeySchema + "=My-Schema")
		if !errors.Is(err, setting.ErrBadValue) || !strings.Contains(err.Error(), "nearest valid name: my_schema") {
			t.Errorf("postgres.schema=My-Schema: %v", err)
		}
		if err := set.Apply(postgres.KeySchema + "=app_2"); err != nil {
			t.Errorf("postgres.schema=app_2: %v", err)
		}
	})
}
