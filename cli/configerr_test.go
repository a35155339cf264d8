package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine/postgres/pgtest"
	"github.com/scalelab/scalelab/results"
)

// emptyDir fails t unless dir holds nothing: a run refused before it
// started leaves no results directory in its parent.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s holds %s, want nothing", dir, e.Name())
	}
}

// wantConfigErr fails t unless the command exited 2 with every one of
// wants on stderr.
func wantConfigErr(t *testing.T, code int, stderr string, wants ...string) {
	t.Helper()
	if code != results.ExitUsage {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, results.ExitUsage, stderr)
	}
	for _, w := range wants {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not say %q:\n%s", w, stderr)
		}
	}
}

// busyPort listens on a loopback port for the test and returns its
// address.
func busyPort(t *testing.T) (addr string, port int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String(), ln.Addr().(*net.TCPAddr).Port
}

// TestRefusedPasswordIsConfigError: a PostgreSQL server that refuses the
// login, with no password given (pgx's SCRAM exchange fails) or a wrong
// one (SQLSTATE 28P01), is exit 2 naming both places the password goes,
// and the run leaves no results directory; a server that is down is still
// a run that could not finish (exit 4) with its run.json.
func TestRefusedPasswordIsConfigError(t *testing.T) {
	skipShort(t, "starts PostgreSQL")
	needPostgres(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	c, err := pgtest.Start(0, pgtest.FastSettings)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	target := c.NewDatabase(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, password string }{
		{"no password", ""},
		{"wrong password", "not-the-password-9f3e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PGPASSWORD", tc.password)
			parent := t.TempDir()
			code, _, stderr := run(t, ctx, "run", "ycsb", "--engine", "postgres", "--target", target, "--duration", "1s",
				"--out", filepath.Join(parent, "r"))
			t.Logf("stderr:\n%s", stderr)
			wantConfigErr(t, code, stderr, "PGPASSWORD", "postgres.password_file", "refused user")
			if tc.password != "" && strings.Contains(stderr, tc.password) {
				t.Errorf("stderr shows the password:\n%s", stderr)
			}
			emptyDir(t, parent)
		})
	}
	t.Run("server down", func(t *testing.T) {
		t.Setenv("PGPASSWORD", c.Password())
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close() // nothing listens there now: connection refused
		dir := filepath.Join(t.TempDir(), "r")
		code, _, stderr := run(t, ctx, "run", "ycsb", "--engine", "postgres", "--target", fmt.Sprintf("postgres://scalelab@127.0.0.1:%d/db", port),
			"--duration", "1s", "--out", dir)
		if code != results.ExitUnfinished {
			t.Errorf("exit %d, want %d; stderr:\n%s", code, results.ExitUnfinished, stderr)
		}
		doc, err := results.Read(dir)
		if err != nil {
			t.Fatalf("a run whose server is down keeps its run.json: %v", err)
		}
		if doc.ExitCode != results.ExitUnfinished || doc.Error == "" {
			t.Errorf("run.json: exit %d, error %q", doc.ExitCode, doc.Error)
		}
	})
}

// TestConfigErrorsBeforeAnythingIsCreated: what the command line alone
// tells is wrong is exit 2 naming the fix, and no results directory (nor
// database file) is created.
func TestConfigErrorsBeforeAnythingIsCreated(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	for _, env := range []string{"PGHOST", "SCALELAB_CASSANDRA_TARGET", "SCALELAB_OPENSEARCH_URL", "SCALELAB_ELASTICSEARCH_URL"} {
		t.Setenv(env, "")
	}
	ctx := context.Background()
	busy, port := busyPort(t)
	holder := fmt.Sprintf("port %d is held by pid %d", port, os.Getpid())
	t.Run("metrics-listen on a busy port", func(t *testing.T) {
		parent := t.TempDir()
		code, _, stderr := run(t, ctx, "run", "ycsb", "--duration", "1s", "--metrics-listen", busy, "--out", filepath.Join(parent, "r"))
		t.Logf("stderr:\n%s", stderr)
		wantConfigErr(t, code, stderr, "--metrics-listen "+busy, holder)
		emptyDir(t, parent)
	})
	t.Run("sqlite target in a missing directory", func(t *testing.T) {
		parent := t.TempDir()
		missing := filepath.Join(parent, "nodir")
		code, _, stderr := run(t, ctx, "run", "ycsb", "--duration", "1s", "--target", filepath.Join(missing, "x.db"), "--out", filepath.Join(parent, "r"))
		wantConfigErr(t, code, stderr, "its directory "+missing+" does not exist")
		emptyDir(t, parent)
	})
	for _, eng := range []string{"postgres", "redis", "mongodb", "memcached", "cassandra", "opensearch", "elasticsearch"} {
		t.Run(eng+" without a target or cluster", func(t *testing.T) {
			parent := t.TempDir()
			code, _, stderr := run(t, ctx, "run", "ycsb", "--engine", eng, "--duration", "1s", "--out", filepath.Join(parent, "r"))
			wantConfigErr(t, code, stderr, "--target", "--cluster", "the "+eng+" engine's store is a server")
			emptyDir(t, parent)
		})
	}
	t.Run("serve on a busy port", func(t *testing.T) {
		dir := t.TempDir()
		code, _, stderr := run(t, ctx, "serve", "records", "--target", filepath.Join(dir, "records.db"), "--listen", busy)
		wantConfigErr(t, code, stderr, "--listen "+busy, holder)
		emptyDir(t, dir)
	})
	t.Run("serve postgres without a target", func(t *testing.T) {
		code, _, stderr := run(t, ctx, "serve", "records", "--engine", "postgres", "--listen", "127.0.0.1:0")
		wantConfigErr(t, code, stderr, "--target", "--cluster")
	})
}

// TestClusterUpUnknownServerParameter: a postgresql.conf name PostgreSQL
// does not know is refused before initdb, with the nearest name it has,
// and no cluster is created.
func TestClusterUpUnknownServerParameter(t *testing.T) {
	needPostgres(t)
	home := t.TempDir()
	t.Setenv("SCALELAB_HOME", home)
	code, _, stderr := run(t, context.Background(), "cluster", "up", "postgres", "--name", "pgopt", "--opt", "shared_buffer=256MB")
	wantConfigErr(t, code, stderr, `no server parameter "shared_buffer"`, `did you mean "shared_buffers"?`, "--describe-config")
	if strings.Contains(stderr, "initdb") || strings.Contains(stderr, "starting postgres cluster") {
		t.Errorf("the cluster was being started:\n%s", stderr)
	}
	emptyDir(t, home)
}
