package cassandra_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/recordstest"
	"github.com/scalelab/scalelab/setting"
)

// openKeyspace opens the engine on the shared 1-node ring in keyspace ks
// with the settings applied.
func openKeyspace(t testing.TB, ks string, settings ...string) *cassandra.Conn {
	t.Helper()
	st, err := cassandratest.Shared(1)
	if err != nil {
		enginetest.Unavailable(t, cassandra.Name, err, "make java")
	}
	set := setting.NewSet((&cassandra.Engine{}).Settings()...)
	for _, kv := range append([]string{cassandra.KeyKeyspace + "=" + ks}, settings...) {
		if err := set.Apply(kv); err != nil {
			t.Fatal(err)
		}
	}
	return enginetest.OpenEngine(t, cassandra.Name, engine.Config{Settings: set, Cluster: st, Scenario: "ownertest"}).(*cassandra.Conn)
}

// TestOwnership plants a user's usertable (a row in it) in a keyspace and
// checks that a run's collection of that name is refused with the data
// intact, that another keyspace proceeds, and that
// cassandra.replace_existing replaces it; then that DropTable, Truncate
// and Claim refuse a user's table, checked before anything is created.
func TestOwnership(t *testing.T) {
	cassandratest.Require(t)
	ks, other := enginetest.Name(), enginetest.Name()
	ctx := context.Background()
	admin := openKeyspace(t, ks)
	plant := func(t testing.TB, table string) {
		for _, q := range []string{
			"CREATE TABLE " + admin.Table(table) + " (id text PRIMARY KEY, v text)",
			"INSERT INTO " + admin.Table(table) + " (id, v) VALUES ('alice', 'precious')",
		} {
			if err := admin.Session().Query(q).ExecContext(ctx); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	intact := func(t testing.TB, table string) bool {
		var v string
		err := admin.Session().Query("SELECT v FROM "+admin.Table(table)+" WHERE id = 'alice'").Consistency(gocql.All).ScanContext(ctx, &v)
		return err == nil && v == "precious"
	}
	recordstest.Ownership(t, recordstest.Owned{
		Engine: cassandra.Name, Name: "usertable", Object: ks + ".usertable",
		Plant:  func(t testing.TB) { plant(t, "usertable") },
		Intact: func(t testing.TB) bool { return intact(t, "usertable") },
		Open:   func(t testing.TB, s ...string) engine.Records { return openKeyspace(t, ks, s...) },
		Other:  func(t testing.TB) engine.Records { return openKeyspace(t, other) },
	})

	plant(t, "accounts")
	if err := admin.CreateTable(ctx, "ours", "id text PRIMARY KEY"); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"drop":     admin.DropTable(ctx, "accounts"),
		"truncate": admin.Truncate(ctx, "accounts"),
		"claim":    admin.Claim(ctx, "ours", "mh_new", "accounts"),
	} {
		var no *engine.NotOwnedError
		if !errors.As(err, &no) || no.Name != ks+".accounts" || no.Namespace != cassandra.KeyKeyspace {
			t.Errorf("%s of a user's table: %v, want a NotOwnedError naming %s.accounts", what, err, ks)
		}
	}
	if !intact(t, "accounts") {
		t.Fatal("the user's accounts table lost its data")
	}
	if err := admin.Truncate(ctx, "ours"); err != nil {
		t.Errorf("truncate of a table scalelab created: %v", err)
	}
}

// TestUsersKeyspaceKeepsItsReplication: a run in a keyspace that holds a
// table scalelab did not create leaves the keyspace's replication as the
// user set it (no ALTER KEYSPACE), and run.json's server info says so.
func TestUsersKeyspaceKeepsItsReplication(t *testing.T) {
	cassandratest.Require(t)
	ks := enginetest.Name()
	ctx := context.Background()
	admin := openKeyspace(t, enginetest.Name())
	for _, q := range []string{
		"CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE " + ks + ".accounts (id text PRIMARY KEY)",
	} {
		if err := admin.Session().Query(q).Consistency(gocql.All).ExecContext(ctx); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { _ = admin.Session().Query("DROP KEYSPACE IF EXISTS " + ks).ExecContext(context.Background()) })
	c := openKeyspace(t, ks)
	var r map[string]string
	if err := admin.Session().Query("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?", ks).
		Consistency(gocql.One).ScanContext(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(r["class"], "SimpleStrategy") {
		t.Errorf("the user's keyspace was altered to %v", r)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rf := info.Extra["replication"]; !strings.Contains(rf, "kept at its own replication") || !strings.Contains(rf, ks+".accounts") {
		t.Errorf("server info's replication %q does not say the user's keyspace was kept", rf)
	}
}
