// Package pgtest starts real local PostgreSQL clusters for tests (a primary
// and streaming replicas, as `scalelab cluster up postgres` does) and makes
// a fresh database per test, so that tests against one cluster can run in
// parallel.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/postgres"
)

// Cluster is a running test cluster.
type Cluster struct {
	State *cluster.State
	dbs   atomic.Int64
}

// FastSettings make a throw-away test cluster quicker: no fsync.
var FastSettings = map[string]string{"fsync": "off", "full_page_writes": "off", "shared_buffers": "32MB"}

// Start starts a cluster of one primary and replicas streaming replicas in
// a new temporary directory; settings go to postgresql.conf (e.g.
// FastSettings). Stop it with Stop. When the server binaries are missing it
// returns an error wrapping postgres.ErrNoBinaries.
func Start(replicas int, settings map[string]string) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "scalelab-pgtest-")
	if err != nil {
		return nil, err
	}
	opts := map[string]string{}
	for k, v := range settings {
		opts[k] = v
	}
	st := &cluster.State{Name: "pgtest", Engine: postgres.Name, Created: time.Now().UTC(), Dir: dir, Params: map[string]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := (postgres.Provisioner{}).Up(ctx, cluster.Spec{Engine: postgres.Name, Name: st.Name, Replicas: replicas, Options: opts}, st); err != nil {
		_ = cluster.StopAll(st, 5*time.Second)
		os.RemoveAll(dir)
		return nil, err
	}
	return &Cluster{State: st}, nil
}

// Stop stops every node and removes the cluster's directory.
func (c *Cluster) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := (postgres.Provisioner{}).Down(ctx, c.State)
	if serr := cluster.StopAll(c.State, 5*time.Second); err == nil {
		err = serr
	}
	if rerr := os.RemoveAll(c.State.Dir); err == nil {
		err = rerr
	}
	return err
}

// Password returns the cluster's password.
func (c *Cluster) Password() string {
	pw, err := c.State.Password()
	if err != nil {
		panic(err)
	}
	return pw
}

// NewDatabase creates a fresh database and returns the target URL that
// names it (without the password); it is dropped when t ends.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), c.dbs.Add(1))
	if err := c.Exec(context.Background(), "", "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReplicas(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Exec(context.Background(), "", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return c.Target(name)
}

// Target returns the primary's target URL for database db ("" is the
// cluster's own database).
func (c *Cluster) Target(db string) string {
	if db == "" {
		return c.State.Target
	}
	u, err := url.Parse(c.State.Target)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + db
	return u.String()
}

// WaitReplicas returns once every replica has replayed the primary's WAL
// as of the call.
func (c *Cluster) WaitReplicas(ctx context.Context) error {
	var lsn string
	if err := c.query(ctx, c.State.Nodes[0].Port, "SELECT pg_current_wal_lsn()::text", &lsn); err != nil {
		return err
	}
	for _, n := range c.State.Nodes[1:] {
		for {
			var caught bool
			if err := c.query(ctx, n.Port, "SELECT pg_last_wal_replay_lsn() >= '"+lsn+"'::pg_lsn", &caught); err != nil {
				return err
			}
			if caught {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// query runs a one-value query on the node at port (cluster database).
func (c *Cluster) query(ctx context.Context, port int, q string, dest any) error {
	conn, err := c.connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable", port, postgres.ClusterUser, postgres.ClusterDB))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, q).Scan(dest)
}

// connect connects to the server of conninfo (a connection string without
// the password) with the cluster's password.
func (c *Cluster) connect(ctx context.Context, conninfo string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(conninfo)
	if err != nil {
		return nil, err
	}
	cfg.Password = c.Password()
	return pgx.ConnectConfig(ctx, cfg)
}

// Exec runs SQL statements on the primary's database db ("" is the
// cluster's own).
func (c *Cluster) Exec(ctx context.Context, db string, stmts ...string) error {
	conn, err := c.connect(ctx, c.Target(db)+"?sslmode=disable")
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// Main runs a package's tests with a cluster of replicas replicas started
// for them (FastSettings), passed to setup before the tests run, and
// stopped after. Without the server binaries the tests fail at once,
// saying how to install them (`make setup` does).
func Main(m *testing.M, replicas int, setup func(*Cluster)) {
	c, err := Start(replicas, FastSettings)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest: cannot start a PostgreSQL cluster for the tests:", err)
		os.Exit(1)
	}
	setShared(c)
	setup(c)
	code := enginetest.Run(m)
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest: stop:", err)
		code = max(code, 1)
	}
	os.Exit(code)
}
