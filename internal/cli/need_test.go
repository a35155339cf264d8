package cli

import (
	"testing"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/engine/memcached"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/internal/testenv"
)

// needRedis stops t unless a redis-server can be started here (skipped,
// or failed under CI).
func needRedis(t *testing.T) {
	t.Helper()
	if _, err := redis.Binary(); err != nil {
		testenv.Unavailable(t, "redis", err, "make setup")
	}
}

// needMemcached stops t unless a memcached server can be started here.
func needMemcached(t *testing.T) {
	t.Helper()
	if _, err := memcached.Binary(); err != nil {
		testenv.Unavailable(t, "memcached", err, "make setup")
	}
}

// needHAProxy stops t unless HAProxy is installed.
func needHAProxy(t *testing.T) {
	t.Helper()
	if _, err := apptier.HAProxyPath(); err != nil {
		testenv.Unavailable(t, "HAProxy", err, "apt-get install haproxy")
	}
}

// needPostgres stops t unless PostgreSQL's server binaries are installed.
func needPostgres(t *testing.T) {
	t.Helper()
	if _, err := postgres.BinDir(); err != nil {
		testenv.Unavailable(t, "PostgreSQL", err, "apt-get install postgresql")
	}
}
