// Package scenariotest opens scenarios for their tests: a fresh store of
// an engine from its test provider (engine/enginetest) with the engine's
// and the scenario's settings, and the scenario's workload on it.
package scenariotest

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// OpenStore opens a fresh store of engine name from its test provider,
// with assignments applied to the engine's and sc's settings. It returns
// the environment to open sc in (seed 0, no tiers) and the provider.
func OpenStore(t testing.TB, sc scenario.Scenario, name string, assignments ...string) (scenario.Env, enginetest.Provider) {
	t.Helper()
	p, ok := enginetest.Lookup(name)
	if !ok {
		t.Fatalf("no test provider for engine %s: register one (engine/enginetest)", name)
	}
	set := enginetest.Settings(t, name, sc.Settings(), assignments...)
	return scenario.Env{Engine: name, Conn: p.Open(t, set), Settings: set}, p
}

// Store is a fresh store of an engine opened for a scenario's tests: the
// environment to open the scenario in (seed 42, no tiers) and the
// scenario, whose workload is of type W.
type Store[W scenario.Workload] struct {
	scenario.Env
	sc scenario.Scenario
}

// NewStore opens a fresh store of engine name from its test provider, with
// assignments applied to the engine's and sc's settings.
func NewStore[W scenario.Workload](t testing.TB, sc scenario.Scenario, name string, assignments ...string) *Store[W] {
	t.Helper()
	env, _ := OpenStore(t, sc, name, assignments...)
	env.Seed = 42
	return &Store[W]{Env: env, sc: sc}
}

// Workload opens the scenario's workload on the store after applying
// assignments to its settings, failing t on error; the workload is closed
// when t ends.
func (s *Store[W]) Workload(t testing.TB, assignments ...string) W {
	t.Helper()
	return MustOpen[W](t, s.sc, s.Env, assignments...)
}

// Open is Workload returning the error.
func (s *Store[W]) Open(assignments ...string) (W, error) {
	return Open[W](s.sc, s.Env, assignments...)
}

// Settings returns sc's settings with assignments applied, failing t on
// a bad one.
func Settings(t testing.TB, sc scenario.Scenario, assignments ...string) *setting.Set {
	t.Helper()
	set := setting.NewSet(sc.Settings()...)
	for _, a := range assignments {
		if err := set.Apply(a); err != nil {
			t.Fatal(err)
		}
	}
	return set
}

// Open applies assignments to env's settings and opens sc's workload in
// env, as W (the scenario's workload type).
func Open[W scenario.Workload](sc scenario.Scenario, env scenario.Env, assignments ...string) (W, error) {
	var none W
	for _, a := range assignments {
		if err := env.Settings.Apply(a); err != nil {
			return none, err
		}
	}
	wl, err := sc.Open(context.Background(), env)
	if err != nil {
		return none, err
	}
	return wl.(W), nil
}

// MustOpen is Open failing t on error; the workload is closed when t
// ends.
func MustOpen[W scenario.Workload](t testing.TB, sc scenario.Scenario, env scenario.Env, assignments ...string) W {
	t.Helper()
	w, err := Open[W](sc, env, assignments...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// MustLoad loads w with workers, failing t on error.
func MustLoad(t testing.TB, w scenario.Workload, workers int) {
	t.Helper()
	if err := w.Load(context.Background(), workers, func(int64) {}); err != nil {
		t.Fatal(err)
	}
}

// LoadAll loads w with workers, failing t on error or unless w's load
// size and the items its progress reported are both want.
func LoadAll(t testing.TB, w scenario.Workload, workers int, want int64) {
	t.Helper()
	if w.LoadSize() != want {
		t.Fatalf("LoadSize %d, want %d", w.LoadSize(), want)
	}
	var loaded atomic.Int64
	if err := w.Load(context.Background(), workers, func(n int64) { loaded.Add(n) }); err != nil {
		t.Fatal(err)
	}
	if loaded.Load() != want {
		t.Fatalf("progress reported %d items, want %d", loaded.Load(), want)
	}
}

// LoadCancels loads w with two workers, cancelling the context at its
// third progress report, and fails t unless Load returns the context's
// error.
func LoadCancels(t testing.TB, w scenario.Workload) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := w.Load(ctx, 2, func(int64) {
		if n++; n == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Load after cancel: %v", err)
	}
}

// Cached opens sc on a fresh memory store with assignments and tier as its
// cache tier (nil: none), seed 42, and loads it with 2 workers.
func Cached[W scenario.Workload](t testing.TB, sc scenario.Scenario, tier *scenario.Tier, assignments ...string) W {
	t.Helper()
	env, _ := OpenStore(t, sc, "memory", assignments...)
	env.Seed = 42
	if tier != nil {
		env.Tiers = map[string]scenario.Tier{scenario.RoleCache: *tier}
	}
	w := MustOpen[W](t, sc, env)
	MustLoad(t, w, 2)
	return w
}

// AuditedSessions runs users sessions of w at once (session u with seed
// seed+u), each for at most ops operations, with their writes logged to a
// history file as a run logs them. An operation's error fails t and ends
// its session unless tolerated (nil: none is) says it may happen. It
// returns the history read back and the file's path.
func AuditedSessions(t testing.TB, w scenario.Workload, users, ops int, seed uint64, tolerated func(error) bool) (*audit.History, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.log")
	hw, err := audit.Create(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for u := range users {
		wg.Go(func() {
			s := w.NewSession(uint64(u), seed+uint64(u))
			l := hw.Log(uint64(u))
			s.(scenario.Audited).SetWriteLog(l)
			for range ops {
				if _, ok := s.Next(); !ok {
					return
				}
				err := s.Do(ctx)
				l.Done(err)
				if err != nil && (tolerated == nil || !tolerated(err)) {
					t.Errorf("session %d: %v", u, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := hw.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := audit.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return h, path
}

// ConcurrentSessions runs sessions of w at once (session i with seed
// seed+i), each for ops operations, and returns how many times each
// operation (by its index in w.Operations) was done. A session that ends
// early fails t; so does an operation's error, ending its session, unless
// tolerated (nil: none is) says that s may meet it in op.
func ConcurrentSessions(t testing.TB, w scenario.Workload, sessions, ops int, seed uint64, tolerated func(s scenario.Session, op int, err error) bool) []int64 {
	t.Helper()
	ctx := context.Background()
	names := w.Operations()
	counts := make([]atomic.Int64, len(names))
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			s := w.NewSession(uint64(i), seed+uint64(i))
			for range ops {
				op, ok := s.Next()
				if !ok {
					t.Error("session ended")
					return
				}
				counts[op].Add(1)
				if err := s.Do(ctx); err != nil && (tolerated == nil || !tolerated(s, op, err)) {
					t.Errorf("%s: %v (class %v)", names[op], err, metrics.ClassOf(err))
					return
				}
			}
		})
	}
	wg.Wait()
	out := make([]int64, len(counts))
	for op := range counts {
		out[op] = counts[op].Load()
	}
	return out
}

// ReadBackAll checks the items of h against what rb reads back
// (audit.Check, batch ids at a time) and fails t unless some writes were
// made, every one was acknowledged and read back, and none is lost.
func ReadBackAll(t testing.TB, h *audit.History, rb audit.ReadBacker, batch int) {
	t.Helper()
	a, err := audit.Check(context.Background(), h, rb, audit.CheckConfig{Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	c := h.Counts()
	if c.OK == 0 || a.Lost != 0 || a.ReadBack != c.Attempted || c.OK != c.Attempted {
		t.Fatalf("audit %+v of %+v: want every write acknowledged and read back, none lost", a, c)
	}
}

// AsideReport returns the "cache" section of w's report, failing t
// unless it has every figure of cache.Stats.Report and those a cache-aside
// (cache.Aside.Report) adds: the write policy, the TTL and the writes'
// counters.
func AsideReport(t testing.TB, w scenario.Reporter) map[string]any {
	t.Helper()
	r, _ := w.Report()["cache"].(map[string]any)
	want := append(slices.Collect(maps.Keys(cache.NewStats().Report(cache.Local, ""))),
		"write_policy", "ttl", "invalidations", "fill_errors", "invalidate_errors")
	for _, k := range want {
		if _, ok := r[k]; !ok {
			t.Fatalf("report %v has no %s", r, k)
		}
	}
	return r
}

// Seeded fails t unless gen, what a generator makes from a seed (named
// what in messages), makes the same from seed a twice and something else
// from seed b.
func Seeded[T comparable](t testing.TB, what string, a, b uint64, gen func(seed uint64) []T) {
	t.Helper()
	if !slices.Equal(gen(a), gen(a)) {
		t.Errorf("same seed, different %s", what)
	}
	if slices.Equal(gen(a), gen(b)) {
		t.Errorf("different seeds, same %s", what)
	}
}

// EachSearchEngine runs f on OpenSearch and on Elasticsearch, as parallel
// subtests named by the engine.
func EachSearchEngine(t *testing.T, f func(t *testing.T, name string)) {
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, name)
		})
	}
}

// NextOp prepares the next operation of s that is op (named name), trying
// at most 1000.
func NextOp(t testing.TB, s scenario.Session, op int, name string) {
	t.Helper()
	for range 1000 {
		if got, ok := s.Next(); ok && got == op {
			return
		}
	}
	t.Fatalf("no %s in 1000 operations", name)
}

// DoOp prepares the next operation of s that is op (named name, trying at
// most 1000) and does it, failing t on error.
func DoOp(t testing.TB, s scenario.Session, op int, name string) {
	t.Helper()
	NextOp(t, s, op, name)
	if err := s.Do(context.Background()); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
