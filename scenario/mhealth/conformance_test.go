package mhealth

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	_ "github.com/scalelab/scalelab/engine/enginetest/all"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/scenariotest"
	"github.com/scalelab/scalelab/setting"
)

// openEngine opens a fresh store of engine name from its test provider
// with the scenario's settings applied.
func openEngine(t *testing.T, name string, sets ...string) (*Workload, scenario.Env) {
	t.Helper()
	env, _ := scenariotest.OpenStore(t, &Scenario{}, name, sets...)
	env.Seed = 42
	return scenariotest.MustOpen[*Workload](t, &Scenario{}, env), env
}

// conformance is the suite every engine implementing mhealth passes: it
// loads patients, lives sessions through their weeks, and checks every
// read against the independent computation.
func conformance(t *testing.T, name string, sets ...string) {
	ctx := context.Background()
	w, _ := openEngine(t, name, append([]string{KeyWeeks + "=2", KeyHoursPerWeek + "=60", KeyPatients + "=3"}, sets...)...)
	if err := w.Load(ctx, 2, func(int64) {}); err != nil {
		t.Fatal(err)
	}
	counts := make([]int, numOps)
	for id := uint64(0); id < 5; id++ { // 3 loaded patients, 2 created by their session
		s := w.NewSession(id, id*7+1).(*Session)
		for {
			op, ok := s.Next()
			if !ok {
				break
			}
			counts[op]++
			if err := s.Do(ctx); err != nil {
				t.Fatalf("%s: session %d: %s: %v", name, id, operationNames[op], err)
			}
			if _, step := s.Composite(); step == scenario.End || step == scenario.Whole {
				counts[OpActivityClient]++
			}
		}
		// Independent computation: totals and achievements of the last post,
		// read once every acknowledged write is visible (a replica replays)
		if err := w.st.settle(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := w.st.totals(ctx, int64(id))
		if err != nil || got != s.total {
			t.Fatalf("%s: patient %d total %d (%v), posted %d", name, id, got, err, s.total)
		}
		a, err := w.st.achievements(ctx, int64(id))
		last := s.acts[len(s.acts)-1].Start
		d, wk, m := periodSums(s.acts, last)
		if err != nil || a.Daily != d || a.Weekly != wk || a.Monthly != m || a.UpdatedFor != last || a.Goals != DefaultGoals {
			t.Fatalf("%s: patient %d achievements %+v (%v), want %d/%d/%d at %d", name, id, a, err, d, wk, m, last)
		}
		p, err := w.st.plan(ctx, int64(id), 1)
		if err != nil || p.Week != 1 || len(p.Exercises) != 3 {
			t.Fatalf("%s: plan of week 1: %+v %v", name, p, err)
		}
	}
	for op, n := range counts {
		if n == 0 {
			t.Errorf("%s: operation %s never ran", name, operationNames[op])
		}
	}
	if n, want := counts[OpActivityPost], 5*w.cfg.weeks*w.cfg.hours; n != want {
		t.Errorf("%s: %d posts, want %d", name, n, want)
	}
	if counts[OpActivityClient] != counts[OpActivityPost] {
		t.Errorf("%s: activity.client closed %d times for %d posts", name, counts[OpActivityClient], counts[OpActivityPost])
	}
	if counts[OpPatientCreate] != 2 {
		t.Errorf("%s: %d patients created by sessions, want 2", name, counts[OpPatientCreate])
	}
	rep := w.Report()
	if st := rep["stale_reads"].(map[string]int64); st["totals.get"] != 0 || st["achievements.get"] != 0 {
		t.Errorf("%s: stale reads on a store that reads its writes: %v", name, st)
	}
	if err := w.Check(ctx); err != nil {
		t.Fatalf("%s: check: %v", name, err)
	}
	// A total changed behind the patients' back is caught by the session's
	// next read and by the check.
	if err := w.st.postActivity(ctx, 1, Activity{Start: Epoch.AddDate(1, 0, 0).UnixMilli(), Steps: 5}); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(ctx); !errors.Is(err, engine.ErrIntegrity) {
		t.Fatalf("%s: check after a foreign write: %v", name, err)
	}
	s := w.NewSession(1, 99).(*Session)
	s.total = w.patients[1].total.Load()
	s.op = OpTotalsGet
	if err := s.do(ctx); !errors.Is(err, engine.ErrIntegrity) || metrics.ClassOf(err) != metrics.Integrity {
		t.Fatalf("%s: totals.get of a total above the posted sum: %v", name, err)
	}
}

// variant is one configuration the suite runs in: a subtest's name and
// its settings.
type variant struct {
	name string
	sets []string
}

// conformanceVariants runs the suite on engine name in each variant, as
// parallel subtests.
func conformanceVariants(t *testing.T, name string, variants ...variant) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			conformance(t, name, v.sets...)
		})
	}
}

func TestConformanceMemory(t *testing.T) { t.Parallel(); conformance(t, "memory") }
func TestConformanceSQLite(t *testing.T) { t.Parallel(); conformance(t, "sqlite") }

// TestEnginesCovered fails for an engine of Engines() without a test
// provider (its conformance tests could not open it).
func TestEnginesCovered(t *testing.T) {
	for _, name := range (&Scenario{}).Engines() {
		if _, ok := enginetest.Lookup(name); !ok {
			t.Errorf("engine %s has no test provider (engine/enginetest)", name)
		}
	}
}

// laggingStore shows totals and achievements one post late, as a search
// engine between refreshes does.
type laggingStore struct {
	store
	shown map[int64]int64
	last  map[int64]int64
}

func (l *laggingStore) postActivity(ctx context.Context, p int64, a Activity) error {
	l.shown[p] = l.last[p]
	got, _ := l.store.totals(ctx, p)
	l.last[p] = got + a.Steps
	return l.store.postActivity(ctx, p, a)
}

func (l *laggingStore) totals(_ context.Context, p int64) (int64, error) { return l.shown[p], nil }

func TestStaleReadsCountedOrRequired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, require := range []bool{false, true} {
		w, _ := openEngine(t, "memory", KeyPatients+"=1", KeyHoursPerWeek+"=5", KeyWeeks+"=1", KeyRequireFresh+"="+map[bool]string{false: "false", true: "true"}[require])
		w.st = &laggingStore{store: w.st, shown: map[int64]int64{}, last: map[int64]int64{}}
		if err := w.Load(ctx, 1, func(int64) {}); err != nil {
			t.Fatal(err)
		}
		s := w.NewSession(0, 3).(*Session)
		var errs []error
		for {
			if _, ok := s.Next(); !ok {
				break
			}
			if err := s.Do(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		stale := w.stale[OpTotalsGet].Load()
		if stale == 0 {
			t.Fatalf("require=%v: no stale read counted", require)
		}
		if !require && len(errs) != 0 {
			t.Fatalf("stale reads must not be errors by default: %v", errs)
		}
		if require && (int64(len(errs)) != stale || !errors.Is(errs[0], engine.ErrIntegrity)) {
			t.Fatalf("require_fresh: %d errors for %d stale reads (%v)", len(errs), stale, errs)
		}
	}
}

// TestActivityClientSteps: a post opens activity.client and the
// achievements read closes it; without reads the post is all of it.
func TestActivityClientSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, prob := range []string{"1", "0"} {
		w, _ := openEngine(t, "memory", KeyPatients+"=1", KeyHoursPerWeek+"=3", KeyWeeks+"=1", KeyReadProb+"="+prob)
		if err := w.Load(ctx, 1, func(int64) {}); err != nil {
			t.Fatal(err)
		}
		s := w.NewSession(0, 5).(*Session)
		var got []scenario.Step
		for {
			op, ok := s.Next()
			if !ok {
				break
			}
			if err := s.Do(ctx); err != nil {
				t.Fatal(err)
			}
			if c, step := s.Composite(); step != scenario.Outside {
				if c != OpActivityClient {
					t.Fatalf("composite %d, want activity.client", c)
				}
				got = append(got, step)
			} else if op == OpActivityPost || op == OpTotalsGet || op == OpAchievementsGet {
				t.Fatalf("%s outside activity.client", operationNames[op])
			}
		}
		want := []scenario.Step{scenario.Begin, scenario.Within, scenario.End}
		if prob == "0" {
			want = []scenario.Step{scenario.Whole}
		}
		if len(got) != 3*len(want) {
			t.Fatalf("read_probability %s: steps %v, want 3 x %v", prob, got, want)
		}
		for i, st := range got {
			if st != want[i%len(want)] {
				t.Fatalf("read_probability %s: steps %v, want 3 x %v", prob, got, want)
			}
		}
	}
}

// TestRefreshAllNeedsSearch: refresh_after_write=all is refused on a store
// without index refreshes, naming the setting.
func TestRefreshAllNeedsSearch(t *testing.T) {
	t.Parallel()
	set := enginetest.Settings(t, "memory", (&Scenario{}).Settings(), KeyRefreshAfter+"="+RefreshAll)
	p, _ := enginetest.Lookup("memory")
	_, err := (&Scenario{}).Open(context.Background(), scenario.Env{Engine: "memory", Conn: p.Open(t, set), Settings: set, Seed: 1})
	if !errors.Is(err, setting.ErrBadValue) || !strings.Contains(err.Error(), KeyRefreshAfter) {
		t.Fatalf("refresh_after_write=all on memory: %v", err)
	}
}

func TestWaitAfterWrite(t *testing.T) {
	t.Parallel()
	w, _ := openEngine(t, "memory", KeyWaitAfterWrite+"=1s", KeyPatients+"=1")
	s := w.NewSession(0, 1).(*Session)
	s.lastWrite = true
	if d, ok := s.Think(); !ok || d.Seconds() != 1 {
		t.Fatalf("think after a write: %v %v", d, ok)
	}
	s.lastWrite = false
	if _, ok := s.Think(); ok {
		t.Fatal("think after a read must fall back to --think")
	}
}
