package cli

import (
	"context"
	"os"
	"testing"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/engine/memcached"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/internal/testenv"
)

// need stops t (skipped, or failed under CI) when find fails: what is
// missing, with install saying how to get it.
func need(t *testing.T, what, install string, find func() error) {
	t.Helper()
	if err := find(); err != nil {
		testenv.Unavailable(t, what, err, install)
	}
}

// needRedis stops t unless a redis-server can be started here.
func needRedis(t *testing.T) {
	t.Helper()
	need(t, "redis", "make setup", func() error { _, err := redis.Binary(); return err })
}

// needMemcached stops t unless a memcached server can be started here.
func needMemcached(t *testing.T) {
	t.Helper()
	need(t, "memcached", "make setup", func() error { _, err := memcached.Binary(); return err })
}

// needHAProxy stops t unless HAProxy is installed.
func needHAProxy(t *testing.T) {
	t.Helper()
	need(t, "HAProxy", "apt-get install haproxy", func() error { _, err := apptier.HAProxyPath(); return err })
}

// needPostgres stops t unless PostgreSQL's server binaries are installed.
func needPostgres(t *testing.T) {
	t.Helper()
	need(t, "PostgreSQL", "apt-get install postgresql", func() error { _, err := postgres.BinDir(); return err })
}

// needCgroupLimits stops t unless it can confine processes with cgroup
// cpu and memory limits (as root).
func needCgroupLimits(t *testing.T) {
	t.Helper()
	if _, err := cgroup.Detect(); err != nil || os.Geteuid() != 0 {
		testenv.Unavailable(t, "cgroup limits", err, "run as root on a machine with cgroup cpu and memory controllers")
	}
}

// upCluster runs `scalelab cluster up ENGINE --name NAME args...`,
// failing t unless it succeeds, and `cluster down NAME` when t ends. It
// returns what the command printed.
func upCluster(t *testing.T, engineName, name string, args ...string) string {
	t.Helper()
	code, out, errs := run(t, context.Background(), append([]string{"cluster", "up", engineName, "--name", name}, args...)...)
	t.Cleanup(func() { run(t, context.Background(), "cluster", "down", name) })
	if code != 0 {
		t.Fatalf("cluster up %s: exit %d\n%s\n%s", engineName, code, out, errs)
	}
	return out
}

// upLoadedCluster is upCluster that also returns the cluster's state.
func upLoadedCluster(t *testing.T, engineName, name string, args ...string) (*cluster.State, string) {
	t.Helper()
	out := upCluster(t, engineName, name, args...)
	st, err := cluster.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return st, out
}

// skipShort skips t under -short, saying why it is long (it builds the
// binary or starts servers).
func skipShort(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
}
