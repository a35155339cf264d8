package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/metrics"
)

var ctx = context.Background()

func open(t *testing.T, target string, assignments ...string) *sqlite.Conn {
	t.Helper()
	set := enginetest.Settings(t, sqlite.Name, nil, assignments...)
	return enginetest.OpenEngine(t, sqlite.Name, engine.Config{Target: target, Settings: set, Dir: t.TempDir()}).(*sqlite.Conn)
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c := open(t, "")
	if filepath.Base(c.Path()) != "sqlite.db" {
		t.Errorf("default path %q", c.Path())
	}
	if _, err := os.Stat(c.Path()); err != nil {
		t.Errorf("database file not created: %v", err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"journal_mode": "wal",
		"synchronous":  "normal",
		"busy_timeout": "5s",
		"cache_size":   "-65536",
		"max_conns":    strconv.Itoa(sqlite.DefaultMaxConns()),
	}
	for k, v := range want {
		if info.Extra[k] != v {
			t.Errorf("Extra[%s] = %q, want %q", k, info.Extra[k], v)
		}
	}
	if info.Engine != "sqlite" || info.Version == "" || info.Target != c.Path() {
		t.Errorf("info = %+v", info)
	}
}

func TestPragmasOnEveryConnection(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x y%20.db") // spaces and escapes stay literal
	c := open(t, path, "sqlite.journal_mode=truncate", "sqlite.synchronous=full",
		"sqlite.busy_timeout=250ms", "sqlite.cache_size=16MiB", "sqlite.max_conns=3")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if c.MaxConns() != 3 || c.Path() != path {
		t.Fatalf("MaxConns %d, Path %q", c.MaxConns(), c.Path())
	}
	// Hold three distinct pooled connections and read the pragmas on each.
	var conns []interface{ Close() error }
	for i := range 3 {
		conn, err := c.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		var jm, cs string
		var sync, bt int
		if err := conn.QueryRowContext(ctx, "pragma journal_mode").Scan(&jm); err != nil {
			t.Fatal(err)
		}
		conn.QueryRowContext(ctx, "pragma synchronous").Scan(&sync)
		conn.QueryRowContext(ctx, "pragma busy_timeout").Scan(&bt)
		conn.QueryRowContext(ctx, "pragma cache_size").Scan(&cs)
		if jm != "truncate" || sync != 2 || bt != 250 || cs != "-16384" {
			t.Errorf("conn %d: journal_mode %s synchronous %d busy_timeout %d cache_size %s", i, jm, sync, bt, cs)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	info, err := c.Info(ctx)
	if err != nil || info.Extra["synchronous"] != "full" || info.Extra["busy_timeout"] != "250ms" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
}

func TestBadTarget(t *testing.T) {
	t.Parallel()
	e := &sqlite.Engine{}
	for _, c := range []struct {
		target string
		want   error // a malformed target or a missing directory is a usage error
	}{
		{filepath.Join(t.TempDir(), "what?.db"), engine.ErrConfig},
		{"file:x.db", engine.ErrConfig},
		{filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"), engine.ErrConfig},
	} {
		_, err := e.Open(ctx, engine.Config{Target: c.target})
		if err == nil {
			t.Errorf("Open(%q) succeeded", c.target)
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("Open(%q): %v does not wrap %v", c.target, err, c.want)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.db")
	c := open(t, path, "sqlite.busy_timeout=20ms")
	db := c.DB()
	if _, err := db.Exec("create table t(k text primary key)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("insert into t values ('a')"); err != nil {
		t.Fatal(err)
	}

	_, err := db.Exec("insert into t values ('a')")
	if !sqlite.IsConstraint(err) {
		t.Fatalf("duplicate key: %v (code %d)", err, sqlite.Code(err))
	}
	if got := metrics.ClassOf(sqlite.Classify(ctx, err)); got != metrics.Other {
		t.Errorf("constraint violation classed %v", got)
	}

	// Hold the write lock from one connection; a write from another fails
	// with SQLITE_BUSY after busy_timeout.
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, "begin immediate"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec("insert into t values ('b')")
	if sqlite.Code(err) != 5 {
		t.Fatalf("write under lock: %v (code %d), want SQLITE_BUSY", err, sqlite.Code(err))
	}
	if got := metrics.ClassOf(sqlite.Classify(ctx, err)); got != metrics.Rejected {
		t.Errorf("SQLITE_BUSY classed %v", got)
	}
	holder.ExecContext(ctx, "rollback")

	if sqlite.Classify(ctx, nil) != nil {
		t.Error("Classify(nil) != nil")
	}
	dctx, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	_, err = db.ExecContext(dctx, "insert into t values ('c')")
	if got := metrics.ClassOf(sqlite.Classify(dctx, err)); got != metrics.Timeout {
		t.Errorf("expired deadline: %v classed %v", err, got)
	}
}

func TestDSN(t *testing.T) {
	t.Parallel()
	got := sqlite.DefaultOptions().DSN("/tmp/a b.db")
	want := "/tmp/a b.db?_pragma=busy_timeout%285000%29&_pragma=journal_mode%28wal%29&_pragma=synchronous%28normal%29&_pragma=cache_size%28-65536%29"
	if got != want {
		t.Errorf("DSN = %s\nwant  %s", got, want)
	}
}
