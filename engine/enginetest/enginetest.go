// Package enginetest is the one test harness of the engines: each engine
// registers a Provider that gives a test a fresh, isolated store (its own
// database, keyspace or index prefix on a cluster the test binary shares),
// and the scenarios' conformance suites loop over every registered
// provider, so that a new engine inherits every suite by registering. The
// embedded engines register here; the server engines from their test
// packages (pgtest, searchtest, cassandratest), which the package all
// imports.
package enginetest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/internal/testenv"
	"github.com/scalelab/scalelab/setting"
)

// Provider makes fresh, isolated stores of one engine for tests.
type Provider struct {
	// Engine is the engine's registry name.
	Engine string
	// Open connects to a fresh, isolated store with the settings of set
	// (the engine's keys and the scenario's; the provider may add its own
	// isolation setting to it). The connection is closed and the store
	// dropped when t ends. A server that cannot run here fails t under CI
	// and skips it otherwise, naming what to install.
	Open func(t testing.TB, set *setting.Set) engine.Conn
	// Settle waits until every acknowledged write is visible to reads,
	// scans and counts (replicas replayed, an index refreshed); nil when
	// nothing lags.
	Settle func(t testing.TB, c engine.Conn)
	// Strict are settings under which scans and counts see every write
	// acknowledged before them (a search index refreshed on every write),
	// for the suites' checks of what a scan returns.
	Strict []string
	// Slow marks a store whose operations take milliseconds even on
	// loopback (FerretDB on SQLite): suites run it with fewer records and
	// operations, every check kept.
	Slow bool
	// LosesUpdates, when not empty, says why the store may lose one of two
	// concurrent acknowledged updates of different fields of one record
	// (an update that reads and rewrites the whole record outside a
	// transaction): the audit suites then accept lost updates, which
	// they log, and check everything else.
	LosesUpdates string
}

var (
	mu        sync.Mutex
	providers = map[string]Provider{}
	stops     []func()
	seq       atomic.Int64
)

// Register adds a provider; it panics on a duplicate engine.
func Register(p Provider) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := providers[p.Engine]; dup {
		panic("enginetest: provider for " + p.Engine + " registered twice")
	}
	providers[p.Engine] = p
}

// Providers returns the registered providers sorted by engine name.
func Providers() []Provider {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Provider, 0, len(providers))
	for _, p := range providers {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Provider) int {
		if a.Engine < b.Engine {
			return -1
		}
		if a.Engine > b.Engine {
			return 1
		}
		return 0
	})
	return out
}

// Lookup returns the provider of engineName.
func Lookup(engineName string) (Provider, bool) {
	mu.Lock()
	defer mu.Unlock()
	p, ok := providers[engineName]
	return p, ok
}

// Unavailable fails t under CI, and skips it otherwise, saying why the
// engine cannot run here and what to install (testenv.Unavailable).
func Unavailable(t testing.TB, engineName string, err error, install string) {
	t.Helper()
	testenv.Unavailable(t, engineName, err, install)
}

// AtExit registers fn to run when Main ends the test binary (stopping a
// shared cluster started on first use).
func AtExit(fn func()) {
	mu.Lock()
	defer mu.Unlock()
	stops = append(stops, fn)
}

// Main runs a package's tests, then stops what the providers started.
// Test packages that use server providers call it from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run runs a package's tests, then stops what the providers started, and
// returns the exit code; for a TestMain that has more to stop (pgtest.Main).
func Run(m *testing.M) int {
	code := m.Run()
	mu.Lock()
	fns := slices.Clone(stops)
	mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
	return code
}

// Name returns a name unique among this machine's test runs (a database,
// keyspace or index prefix), lower case.
func Name() string { return fmt.Sprintf("t%d_%d", os.Getpid(), seq.Add(1)) }

// Settings returns a set of the engine's settings and extra's, with the
// assignments applied.
func Settings(t testing.TB, engineName string, extra []setting.Spec, assignments ...string) *setting.Set {
	t.Helper()
	e, err := engine.Lookup(engineName)
	if err != nil {
		t.Fatal(err)
	}
	set := setting.NewSet(append(e.Settings(), extra...)...)
	for _, a := range assignments {
		if err := set.Apply(a); err != nil {
			t.Fatal(err)
		}
	}
	return set
}

// OpenEngine opens engineName with cfg and closes the connection when t
// ends.
func OpenEngine(t testing.TB, engineName string, cfg engine.Config) engine.Conn {
	t.Helper()
	e, err := engine.Lookup(engineName)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open %s: %v", engineName, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Corrupt overwrites field of key with value directly through the store's
// records (behind a scenario's back), in the collection name with fields.
func Corrupt(t testing.TB, c engine.Conn, name string, fields []string, key string, field int, value string) {
	t.Helper()
	r, ok := c.(engine.Records)
	if !ok {
		t.Fatalf("%T has no records to corrupt", c)
	}
	col, err := r.Collection(context.Background(), engine.CollectionSpec{Name: name, Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	vals := make([][]byte, len(fields))
	vals[field] = []byte(value)
	if err := col.Update(context.Background(), []byte(key), []int{field}, vals); err != nil {
		t.Fatalf("corrupt %s: %v", key, err)
	}
}
