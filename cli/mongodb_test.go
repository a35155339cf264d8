package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/internal/testenv"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestFerretDBCluster runs what a new user runs: a local FerretDB server,
// social and mhealth (one collection per patient) on it through the
// mongodb engine, results that name FerretDB and never MongoDB, and a
// sharding setting refused with exit 2 naming the server.
func TestFerretDBCluster(t *testing.T) {
	if _, err := mongodb.FerretDBPath(context.Background()); err != nil {
		testenv.Unavailable(t, "ferretdb", err, "make ferretdb")
	}
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	st, out := upLoadedCluster(t, "ferretdb", "f1")
	if !strings.Contains(out, "cluster f1 (ferretdb) is up") || !strings.Contains(out, "engine mongodb") {
		t.Fatalf("up: %s", out)
	}
	if st.Engine != mongodb.Name || st.Kind != mongodb.FerretDB || len(st.Nodes) != 1 {
		t.Fatalf("state %+v", st)
	}
	if code, out, _ := run(t, ctx, "cluster", "status", "f1"); code != 0 || !strings.Contains(out, "listening=true") || !strings.Contains(out, "cluster f1 (ferretdb for mongodb)") {
		t.Fatalf("status: %d %s", code, out)
	}

	for _, c := range []struct {
		scenario string
		sets     []string
	}{
		{"social", []string{"--set", "social.users=200", "--users", "1"}}, // one user: see TestFerretDBPostgresBackend
		{"mhealth", []string{"--set", "mongodb.layout=per_user", "--users", "3"}},
	} {
		dir := filepath.Join(t.TempDir(), c.scenario)
		args := append([]string{"run", c.scenario, "--cluster", "f1", "--duration", "2s", "--out", dir, "--progress", "off"}, c.sets...)
		code, out, errs := run(t, ctx, args...)
		if code != 0 || !strings.Contains(out, "measured on FerretDB v1.24.2 (sqlite backend)") {
			t.Fatalf("%s: %d\n%s\n%s", c.scenario, code, out, errs)
		}
		r := resultstest.Read(t, dir)
		if r.Engine != mongodb.Name || r.Server == nil || !strings.HasPrefix(r.Server.Product, "FerretDB v1.24.2") || r.Server.Extra["backend"] != "sqlite" {
			t.Fatalf("%s: run.json server %+v", c.scenario, r.Server)
		}
		if r.Server.After["requests_per_server"] == "" || r.Totals == nil || r.Totals.Count == 0 {
			t.Fatalf("%s: after %v totals %+v", c.scenario, r.Server.After, r.Totals)
		}
		page, err := os.ReadFile(filepath.Join(dir, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), c.scenario+" on FerretDB v1.24.2 (sqlite backend)") || strings.Contains(string(page), "MongoDB 7") {
			t.Fatalf("%s: the report does not name FerretDB as the server measured", c.scenario)
		}
	}

	// Sharding needs a sharded cluster: exit 2, naming what the server is.
	code, _, errs := run(t, ctx, "run", "ycsb", "--cluster", "f1", "--duration", "1s", "--set", "mongodb.shard_key=hashed:_id",
		"--out", filepath.Join(t.TempDir(), "shard"), "--progress", "off")
	if code != ExitUsage || !strings.Contains(errs, "needs a sharded cluster") || !strings.Contains(errs, "FerretDB v1.24.2") {
		t.Fatalf("shard key on FerretDB: %d %s", code, errs)
	}
}

// TestMongoDBTargetPassword refuses a target that holds a password
// without echoing it.
func TestMongoDBTargetPassword(t *testing.T) {
	code, out, errs := run(t, context.Background(), "run", "ycsb", "--engine", "mongodb", "--target", "mongodb://u:s3cr3t@127.0.0.1:1/db",
		"--out", filepath.Join(t.TempDir(), "r"), "--progress", "off")
	if code != ExitUsage || !strings.Contains(errs, "holds a password") || strings.Contains(out+errs, "s3cr3t") {
		t.Fatalf("%d\n%s\n%s", code, out, errs)
	}
}

// TestFerretDBPostgresBackend starts FerretDB on a PostgreSQL server of its
// own: clients authenticate with the cluster's user and password, which
// FerretDB passes through to PostgreSQL, and a wrong password is refused.
func TestFerretDBPostgresBackend(t *testing.T) {
	if _, err := mongodb.FerretDBPath(context.Background()); err != nil {
		testenv.Unavailable(t, "ferretdb", err, "make ferretdb")
	}
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	code, out, errs := run(t, ctx, "cluster", "up", "ferretdb", "--name", "fp", "--backend", "postgres")
	if code != 0 || !strings.Contains(out, "auth: PLAIN") {
		if strings.Contains(errs, "PostgreSQL") && strings.Contains(errs, "install") {
			testenv.Unavailable(t, "postgres", nil, "apt-get install postgresql")
		}
		t.Fatalf("up: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { run(t, context.Background(), "cluster", "down", "fp") })
	dir := filepath.Join(t.TempDir(), "r")
	// One user: FerretDB can lose one of two concurrent updates of a
	// document (docs/engines/mongodb.md), which the audit would report.
	code, out, errs = run(t, ctx, "run", "ycsb", "--cluster", "fp", "--duration", "1s", "--users", "1", "--set", "ycsb.records=200", "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("run: %d %s %s", code, out, errs)
	}
	if r := resultstest.Read(t, dir); r.Server == nil || r.Server.Product != "FerretDB v1.24.2 (postgresql backend)" {
		t.Fatalf("server %+v", r.Server)
	}
	st, err := cluster.Load("fp")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(mongodb.PasswordEnv, "not-the-password")
	code, out, errs = run(t, ctx, "run", "ycsb", "--engine", "mongodb", "--target", st.Target, "--duration", "1s", "--out", dir+"-bad", "--progress", "off")
	if code != ExitUsage || !strings.Contains(errs, "authentication failed") || !strings.Contains(errs, mongodb.PasswordEnv) || !strings.Contains(errs, mongodb.KeyPasswordFile) ||
		strings.Contains(out+errs, "not-the-password") {
		t.Fatalf("wrong password: %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(dir + "-bad"); !os.IsNotExist(err) {
		t.Fatalf("a refused password left its results directory: %v", err)
	}
}
