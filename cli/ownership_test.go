package cli

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the user's own file, written as the user would
)

// ownerServer is a local PostgreSQL for the ownership tests; newDB makes a
// fresh database on it and returns the target naming it.
type ownerServer struct {
	target string // the cluster's own database
	dbs    int
}

func (s *ownerServer) newDB(t *testing.T) string {
	t.Helper()
	s.dbs++
	name := fmt.Sprintf("own%d", s.dbs)
	pgExec(t, s.target, "CREATE DATABASE "+name)
	u, err := url.Parse(s.target)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// pgExec runs statements on target as the user would (psql: no
// search_path of scalelab's), with the password in PGPASSWORD.
func pgExec(t *testing.T, target string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, target+"?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// pgNote reads the user's row of table ("" when the row or the table is
// gone).
func pgNote(t *testing.T, target, table string) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, target+"?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var note string
	_ = c.QueryRow(ctx, "SELECT note FROM "+table+" WHERE id = 1").Scan(&note)
	return note
}

// userTable is the user's table, holding one row, as DDL and an INSERT.
func userTable(table string) []string {
	return []string{"CREATE TABLE " + table + " (id int PRIMARY KEY, note text)", "INSERT INTO " + table + " VALUES (1, 'the user''s row')"}
}

const userRow = "the user's row"

// TestRunLeavesUsersTablesAlone: pointed at a database that holds a user's
// table of the name a scenario uses, a run refuses (exit 2, naming the
// table and both ways on) and the user's row survives; in another schema
// or with postgres.replace_existing=true it runs; a user's table in public
// is never touched. SQLite likewise for the user's file.
func TestRunLeavesUsersTablesAlone(t *testing.T) {
	skipShort(t, "starts PostgreSQL")
	needPostgres(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	st, _ := upLoadedCluster(t, "postgres", "pgown", "--opt", "fsync=off", "--opt", "full_page_writes=off")
	pw, err := st.Password()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSWORD", pw)
	srv := &ownerServer{target: st.Target}
	ctx := context.Background()
	ycsb := func(t *testing.T, target string, sets ...string) (int, string) {
		t.Helper()
		args := []string{"run", "ycsb", "--engine", "postgres", "--target", target, "--duration", "1s", "--users", "2",
			"--set", "ycsb.records=200", "--out", filepath.Join(t.TempDir(), "r"), "--progress", "off"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		code, out, stderr := run(t, ctx, args...)
		return code, out + stderr
	}

	for _, schema := range []string{"scalelab", "public"} {
		t.Run("refused in schema "+schema, func(t *testing.T) {
			db := srv.newDB(t)
			pgExec(t, db, append([]string{"CREATE SCHEMA IF NOT EXISTS " + schema}, userTable(schema+".usertable")...)...)
			code, out := ycsb(t, db, "postgres.schema="+schema)
			if code != 2 {
				t.Fatalf("exit %d, want 2\n%s", code, out)
			}
			for _, want := range []string{"table " + schema + ".usertable exists and was not created by scalelab", "--set postgres.schema=NAME", "--set postgres.replace_existing=true"} {
				if !strings.Contains(out, want) {
					t.Errorf("output does not say %q:\n%s", want, out)
				}
			}
			if got := pgNote(t, db, schema+".usertable"); got != userRow {
				t.Errorf("the user's row after the refused run: %q", got)
			}
		})
	}

	t.Run("another schema, or replace_existing, runs", func(t *testing.T) {
		db := srv.newDB(t)
		pgExec(t, db, append([]string{"CREATE SCHEMA scalelab"}, userTable("scalelab.usertable")...)...)
		if code, out := ycsb(t, db, "postgres.schema=other"); code != 0 {
			t.Fatalf("postgres.schema=other: exit %d\n%s", code, out)
		}
		if got := pgNote(t, db, "scalelab.usertable"); got != userRow {
			t.Errorf("the user's row after a run in schema other: %q", got)
		}
		if code, out := ycsb(t, db, "postgres.replace_existing=true"); code != 0 {
			t.Fatalf("postgres.replace_existing=true: exit %d\n%s", code, out)
		}
		// the run replaced it, and a run after it reuses scalelab's own table
		if code, out := ycsb(t, db); code != 0 {
			t.Fatalf("a run over the table the last run created: exit %d\n%s", code, out)
		}
	})

	t.Run("a table in public is never touched", func(t *testing.T) {
		db := srv.newDB(t)
		pgExec(t, db, userTable("public.usertable")...)
		if code, out := ycsb(t, db); code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if got := pgNote(t, db, "public.usertable"); got != userRow {
			t.Errorf("public.usertable's row after a run: %q", got)
		}
	})

	for _, tc := range []struct{ scenario, table string }{
		{"records", "rc_grants"},
		{"logs", "logs"},
		{"mhealth", "mh_plan"},
	} {
		t.Run(tc.scenario+" refuses a user's "+tc.table, func(t *testing.T) {
			db := srv.newDB(t)
			pgExec(t, db, append([]string{"CREATE SCHEMA scalelab"}, userTable("scalelab."+tc.table)...)...)
			code, out, stderr := run(t, ctx, "run", tc.scenario, "--engine", "postgres", "--target", db, "--duration", "1s",
				"--out", filepath.Join(t.TempDir(), "r"), "--progress", "off")
			if code != 2 || !strings.Contains(stderr, "table scalelab."+tc.table+" exists") {
				t.Fatalf("exit %d, want 2 naming scalelab.%s\n%s\n%s", code, tc.table, out, stderr)
			}
			if got := pgNote(t, db, "scalelab."+tc.table); got != userRow {
				t.Errorf("the user's row after the refused run: %q", got)
			}
		})
		t.Run(tc.scenario+" on sqlite refuses a user's "+tc.table, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "user.db")
			db := sqliteExec(t, file, userTable(tc.table)...)
			code, out, stderr := run(t, ctx, "run", tc.scenario, "--engine", "sqlite", "--target", file, "--duration", "1s",
				"--out", filepath.Join(t.TempDir(), "r"), "--progress", "off")
			if code != 2 || !strings.Contains(stderr, "table "+tc.table+" in "+file+" exists") {
				t.Fatalf("exit %d, want 2 naming %s in the file\n%s\n%s", code, tc.table, out, stderr)
			}
			var note string
			_ = db.QueryRow("SELECT note FROM " + tc.table + " WHERE id = 1").Scan(&note)
			if note != userRow {
				t.Errorf("the user's row after the refused run: %q", note)
			}
		})
	}

	t.Run("sqlite: the user's file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "user.db")
		db := sqliteExec(t, file, userTable("usertable")...)
		note := func() string {
			var n string
			_ = db.QueryRow("SELECT note FROM usertable WHERE id = 1").Scan(&n)
			return n
		}
		args := []string{"run", "ycsb", "--engine", "sqlite", "--target", file, "--duration", "1s", "--set", "ycsb.records=200", "--progress", "off"}
		code, out, stderr := run(t, ctx, append(args, "--out", filepath.Join(t.TempDir(), "r"))...)
		if code != 2 || !strings.Contains(stderr, "table usertable in "+file) || !strings.Contains(stderr, "--set sqlite.replace_existing=true") {
			t.Fatalf("exit %d, want 2 naming the table and the file\n%s\n%s", code, out, stderr)
		}
		if got := note(); got != userRow {
			t.Errorf("the user's row after the refused run: %q", got)
		}
		code, out, stderr = run(t, ctx, append(args, "--out", filepath.Join(t.TempDir(), "r2"), "--set", "sqlite.replace_existing=true")...)
		if code != 0 {
			t.Fatalf("sqlite.replace_existing=true: exit %d\n%s\n%s", code, out, stderr)
		}
	})
}

// sqliteExec runs statements on the SQLite file as the user would, and
// returns the handle (closed when t ends).
func sqliteExec(t *testing.T, file string, stmts ...string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return db
}
