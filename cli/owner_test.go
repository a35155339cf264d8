package cli

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/engine/search/searchtest"
	"github.com/scalelab/scalelab/internal/testenv"
)

// openStore connects to a store as a user's application would, closed
// when t ends.
func openStore(t *testing.T, engineName string, cfg engine.Config) engine.Conn {
	t.Helper()
	return enginetest.OpenEngine(t, engineName, cfg)
}

// ownedRuns runs ycsb (args name the store) over a user's object of the
// name it uses: refused with exit 2 and the object named on stderr, the
// data intact; then with the namespace setting other and with
// <engine>.replace_existing=true, both exit 0. intact reports whether the
// user's data is still there (after the last run too when kept).
func ownedRuns(t *testing.T, engineName, object, other string, intact func() bool, args ...string) {
	t.Helper()
	ctx := context.Background()
	base := append([]string{"run", "ycsb", "--engine", engineName, "--duration", "1s", "--progress", "off", "--set", "ycsb.records=200"}, args...)
	code, out, errs := run(t, ctx, append(base, "--out", filepath.Join(t.TempDir(), "refused"))...)
	if code != 2 || !strings.Contains(errs, object) || !strings.Contains(errs, engineName+".replace_existing=true") {
		t.Fatalf("run over a user's %s: exit %d, want 2 naming it\n%s\n%s", object, code, out, errs)
	}
	t.Logf("refused: %s", strings.TrimSpace(errs))
	if !intact() {
		t.Fatalf("a refused run lost the user's %s", object)
	}
	code, out, errs = run(t, ctx, append(base, "--out", filepath.Join(t.TempDir(), "other"), "--set", other)...)
	if code != 0 {
		t.Fatalf("run with --set %s: exit %d\n%s\n%s", other, code, out, errs)
	}
	if !intact() {
		t.Fatalf("a run with --set %s touched the user's %s", other, object)
	}
	code, out, errs = run(t, ctx, append(base, "--out", filepath.Join(t.TempDir(), "replace"), "--set", engineName+".replace_existing=true")...)
	if code != 0 {
		t.Fatalf("run with %s.replace_existing=true: exit %d\n%s\n%s", engineName, code, out, errs)
	}
}

// TestOwnershipRedis: a user's keys under scalelab:usertable: refuse a
// ycsb run; a user's key under another prefix (app:user:1) is untouched
// by every run, the replacing one included.
func TestOwnershipRedis(t *testing.T) {
	needRedis(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	st, _ := upLoadedCluster(t, "redis", "own")
	cl := openStore(t, redis.Name, engine.Config{Cluster: st}).(*redis.Conn).Client()
	ctx := context.Background()
	if err := cl.HSet(ctx, "scalelab:usertable:alice", "v", "precious").Err(); err != nil {
		t.Fatal(err)
	}
	if err := cl.Set(ctx, "app:user:1", "precious", 0).Err(); err != nil {
		t.Fatal(err)
	}
	app := func() bool { v, err := cl.Get(ctx, "app:user:1").Result(); return err == nil && v == "precious" }
	ownedRuns(t, redis.Name, "scalelab:usertable:*", "redis.prefix=other:", func() bool {
		v, err := cl.HGet(ctx, "scalelab:usertable:alice", "v").Result()
		return err == nil && v == "precious" && app()
	}, "--cluster", "own")
	if !app() {
		t.Fatal("a run with redis.replace_existing deleted app:user:1, outside its prefix")
	}
}

// TestOwnershipMongoDB: a user's collection usertable in the target's
// database refuses a ycsb run.
func TestOwnershipMongoDB(t *testing.T) {
	if _, err := mongodb.FerretDBPath(context.Background()); err != nil {
		testenv.Unavailable(t, "ferretdb", err, "make ferretdb")
	}
	t.Setenv("SCALELAB_HOME", t.TempDir())
	st, _ := upLoadedCluster(t, "ferretdb", "ownf")
	db := openStore(t, mongodb.Name, engine.Config{Cluster: st}).(*mongodb.Conn).Primary()
	ctx := context.Background()
	users := db.Collection("usertable")
	if _, err := users.InsertOne(ctx, bson.D{{Key: "_id", Value: "alice"}, {Key: "v", Value: "precious"}}); err != nil {
		t.Fatal(err)
	}
	ownedRuns(t, mongodb.Name, db.Name()+".usertable", "mongodb.database=other", func() bool {
		n, err := users.CountDocuments(ctx, bson.D{{Key: "_id", Value: "alice"}})
		return err == nil && n == 1
	}, "--cluster", "ownf", "--users", "1") // one user: FerretDB v1 can lose one of two concurrent updates of a document
}

// TestOwnershipOpenSearch: a user's index of the name a ycsb run uses
// (scalelab-usertable) refuses the run.
func TestOwnershipOpenSearch(t *testing.T) {
	searchtest.Require(t, search.OpenSearch)
	target, err := searchtest.Shared(search.OpenSearch)
	if err != nil {
		enginetest.Unavailable(t, search.OpenSearch, err, "make java")
	}
	c := openStore(t, search.OpenSearch, engine.Config{Target: target}).(*search.Conn)
	ctx := context.Background()
	other := enginetest.Name() + "-"
	index := search.DefaultIndexPrefix + "usertable"
	drop := func() {
		for _, ix := range []string{index, other + "usertable"} {
			_, _, _ = c.Do(ctx, http.MethodDelete, "/"+ix, "ignore_unavailable=true", nil)
		}
	}
	drop()
	t.Cleanup(drop)
	for _, req := range [][3]string{
		{"/" + index, "", `{"settings":{"number_of_replicas":0}}`},
		{"/" + index + "/_doc/alice", "refresh=true", `{"v":"precious"}`},
	} {
		if code, data, err := c.Do(ctx, http.MethodPut, req[0], req[1], []byte(req[2])); err != nil || code >= 300 {
			t.Fatalf("PUT %s: %d %s %v", req[0], code, data, err)
		}
	}
	ownedRuns(t, search.OpenSearch, index, "opensearch.index_prefix="+other, func() bool {
		src, err := c.GetDoc(ctx, index, "alice", "", "")
		return err == nil && strings.Contains(string(src), "precious")
	}, "--target", target, "--set", "opensearch.replicas=0")
}

// TestOwnershipCassandra: a user's usertable in keyspace scalelab refuses
// a ycsb run.
func TestOwnershipCassandra(t *testing.T) {
	cassandratest.Require(t)
	st, err := cassandratest.Shared(1)
	if err != nil {
		enginetest.Unavailable(t, cassandra.Name, err, "make java")
	}
	pw, err := st.Password()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(cassandra.PasswordEnv, pw)
	c := openStore(t, cassandra.Name, engine.Config{Cluster: st}).(*cassandra.Conn)
	ctx := context.Background()
	other := enginetest.Name()
	drop := func() {
		for _, ks := range []string{"scalelab", other} {
			_ = c.Session().Query("DROP KEYSPACE IF EXISTS " + ks).ExecContext(ctx)
		}
	}
	drop()
	t.Cleanup(drop)
	for _, q := range []string{
		"CREATE KEYSPACE IF NOT EXISTS scalelab WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE scalelab.usertable (id text PRIMARY KEY, v text)",
		"INSERT INTO scalelab.usertable (id, v) VALUES ('alice', 'precious')",
	} {
		if err := c.Session().Query(q).ExecContext(ctx); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ownedRuns(t, cassandra.Name, "scalelab.usertable", "cassandra.keyspace="+other, func() bool {
		var v string
		err := c.Session().Query("SELECT v FROM scalelab.usertable WHERE id = 'alice'").Consistency(gocql.One).ScanContext(ctx, &v)
		return err == nil && v == "precious"
	}, "--target", st.Target, "--set", "cassandra.user="+st.User)
}
