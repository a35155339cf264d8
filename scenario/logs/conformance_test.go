package logs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	_ "github.com/scalelab/scalelab/engine/enginetest/all"
	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/scenariotest"
	"github.com/scalelab/scalelab/setting"
)

// The conformance suite: every engine in Engines() gets its stores from
// its test provider (engine/enginetest) and has an entry in testEngines
// (how a test changes data behind the scenario's back in this scenario's
// own storage), and passes the same checks. A storage file for a new
// engine adds its entry from its own test file's init, as
// postgres_test.go does.

// testEngine is what the suite needs of an engine beyond its provider.
type testEngine struct {
	// exec runs SQL-like statements directly on the store (the primary),
	// bypassing the scenario, and waits until replicas have them.
	exec func(t *testing.T, c engine.Conn, stmts ...string)
	// settle waits until every acknowledged write is visible (nil: the
	// provider's Settle).
	settle func(t *testing.T, c engine.Conn)
	// lags reports whether reads under these settings may miss recent
	// writes of other users (replicas): such reads are not_found, never
	// integrity errors.
	lags func(set *setting.Set) bool
	// variants are engine settings the suite runs under, beside the
	// defaults.
	variants [][]string
}

func (e *env) settle(t *testing.T) {
	t.Helper()
	switch {
	case e.te.settle != nil:
		e.te.settle(t, e.conn)
	case e.p.Settle != nil:
		e.p.Settle(t, e.conn)
	}
}

var testEngines = map[string]*testEngine{
	sqlite.Name: {
		exec: func(t *testing.T, c engine.Conn, stmts ...string) {
			for _, s := range stmts {
				if _, err := c.(*sqlite.Conn).DB().Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
		},
	},
}

// env is an engine connection with the resolved settings of the engine and
// the scenario.
type env struct {
	name string
	te   *testEngine
	p    enginetest.Provider
	conn engine.Conn
	set  *setting.Set
}

func openEnv(t *testing.T, name string, assignments ...string) *env {
	t.Helper()
	te := testEngines[name]
	if te == nil {
		t.Fatalf("no test engine for %s: add one to testEngines", name)
	}
	se, p := scenariotest.OpenStore(t, &Scenario{}, name, assignments...)
	return &env{name: name, te: te, p: p, conn: se.Conn, set: se.Settings}
}

// workload opens the scenario after applying more settings.
func (e *env) workload(t *testing.T, assignments ...string) *Workload {
	t.Helper()
	return scenariotest.MustOpen[*Workload](t, &Scenario{}, e.scenarioEnv(), assignments...)
}

func (e *env) open(assignments ...string) (*Workload, error) {
	return scenariotest.Open[*Workload](&Scenario{}, e.scenarioEnv(), assignments...)
}

// scenarioEnv is the environment the tests open logs in.
func (e *env) scenarioEnv() scenario.Env {
	return scenario.Env{Engine: e.name, Conn: e.conn, Settings: e.set, Seed: 7}
}

// allOps is a mix with every operation.
const allOps = "logs.mix=write:10,write_bulk:2,read:10,count_a:5,count_b:5,count_c:5,errors_per_host:2,search:1"

// smallProbe makes freshness probes quick.
var smallProbe = []string{"logs.freshness_records=300", "logs.freshness_rate=3000", "logs.freshness_poll=10ms", "logs.freshness_max_polls=500"}

const conformanceRecords = 3000

// slowRecords replaces conformanceRecords for a slow store
// (enginetest.Provider.Slow): more than NumTimestamps, so that every
// timestamp still has records.
const slowRecords = 1500

// TestConformance runs the suite on every engine of the scenario, under
// its settings variants.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, name := range (&Scenario{}).Engines() {
		te := testEngines[name]
		if te == nil {
			t.Fatalf("no test engine for %s: add one to testEngines", name)
		}
		variants := append([][]string{nil}, te.variants...)
		for _, v := range variants {
			label := name
			if len(v) > 0 {
				label += "/" + strings.Join(v, ",")
			}
			t.Run(label, func(t *testing.T) {
				t.Parallel()
				conformance(t, name, v)
			})
		}
	}
}

func conformance(t *testing.T, name string, variant []string) {
	ctx := context.Background()
	e := openEnv(t, name, variant...)
	records := int64(conformanceRecords)
	if e.p.Slow {
		records = slowRecords
	}
	w := e.workload(t, append([]string{fmt.Sprint("logs.records=", records), allOps, "logs.batch_size=50", "logs.session_ops=0"}, smallProbe...)...)
	scenariotest.LoadAll(t, w, 3, records)
	if n, next, err := w.st.existing(ctx); err != nil || n != records || next != records {
		t.Fatalf("existing after load: %d records, next %d, %v", n, next, err)
	}

	// Every kind of query answers what the ground truth says.
	checkQueries(t, w, records)

	// Sessions in parallel with every operation: no error at all.
	var notFound atomic.Int64
	lags := e.te.lags != nil && e.te.lags(e.set)
	counts := scenariotest.ConcurrentSessions(t, w, 4, 100, 100, func(_ scenario.Session, op int, err error) bool {
		if op == OpRead && lags && metrics.ClassOf(err) == metrics.NotFound {
			notFound.Add(1)
			return true
		}
		return false
	})
	for op, weight := range w.cfg.mix {
		if (weight > 0) != (counts[op] > 0) {
			t.Errorf("%s done %d times with weight %g", operationNames[op], counts[op], weight)
		}
	}
	if nf := notFound.Load(); nf > counts[OpRead]/2 {
		t.Errorf("%d of %d reads found nothing", nf, counts[OpRead])
	}
	n := w.ids.prefix.Load()
	if n != w.ids.issued.Load() || n <= records || w.ids.failures.Load() != 0 {
		t.Fatalf("after the sessions: prefix %d, issued %d, failures %d", n, w.ids.issued.Load(), w.ids.failures.Load())
	}
	// With no write in flight, the answers are exact over every record.
	e.settle(t)
	checkQueries(t, w, n)

	// A freshness probe: the writes, then polls until all are visible.
	s := w.newSession(5)
	freshnessProbe(t, s)
	rep := w.Report()
	f, ok := rep["freshness"].(map[string]any)
	if !ok || f["probes"] != 1 || f["failed_probes"] != 0 {
		t.Fatalf("report after a probe: %v", rep)
	}
	if d := f["delay_ms"].(map[string]any)["min"].(float64); d <= 0 {
		t.Errorf("freshness delay %g ms, want > 0", d)
	}

	// Reopening without a load finds the records (not the probe's), drops
	// the indexes with indexes=off, and the answers stay right.
	w2 := e.workload(t, "logs.load=false", "logs.indexes=off", "logs.records=0")
	e.settle(t)
	if w2.base != n {
		t.Fatalf("reopened with load=false: base %d, want %d", w2.base, n)
	}
	checkQueries(t, w2, n)
	s = w2.newSession(9)
	for range 40 {
		s.Next()
		if err := s.Do(ctx); err != nil {
			t.Fatalf("without indexes: %v", err)
		}
	}
	if w2.probes.Load() != 0 {
		t.Fatal("a probe ran in the reopened workload")
	}

	corruption(t, e)
}

// checkQueries compares every kind of query, through one view, with the
// ground truth over records 0..n-1.
func checkQueries(t *testing.T, w *Workload, n int64) {
	t.Helper()
	ctx := context.Background()
	v := w.st.newView()
	for a := 0; a < NumTimestamps; a += 167 {
		ts := Timestamp(a)
		if got, _, err := v.countA(ctx, ts); err != nil || got != CountA(a, n) {
			t.Fatalf("count_a(%d) = %d, %v; want %d", ts, got, err, CountA(a, n))
		}
		for m := a % 3; m < NumMachines; m += 7 {
			if got, _, err := v.countB(ctx, ts, machines[m]); err != nil || got != CountB(a, m, n) {
				t.Fatalf("count_b(%d, %s) = %d, %v; want %d", ts, machines[m], got, err, CountB(a, m, n))
			}
		}
		for svc := a % 4; svc < NumServices; svc += 6 {
			for sev := a % 2; sev <= MaxSeverity; sev += 4 {
				if got, _, err := v.countC(ctx, ts, services[svc], sev); err != nil || got != CountC(a, svc, sev, n) {
					t.Fatalf("count_c(%d, %s, %d) = %d, %v; want %d", ts, services[svc], sev, got, err, CountC(a, svc, sev, n))
				}
			}
		}
	}
	for _, win := range [][2]int{{0, 9}, {500, 530}, {1000, 1008}} {
		got := map[string]int64{}
		if _, err := v.errorsPerHost(ctx, Timestamp(win[0]), Timestamp(win[1]), ErrorSeverity, got); err != nil {
			t.Fatal(err)
		}
		want := ErrorsPerHost(win[0], win[1], n)
		for m, name := range machines {
			if got[name] != want[m] {
				t.Fatalf("errors_per_host(%v): %s has %d, want %d", win, name, got[name], want[m])
			}
		}
	}
	for wd := int(n % 5); wd < NumWords; wd += 5 {
		word := words[wd]
		if got, _, err := v.search(ctx, word); err != nil || got != Search(wd, n) {
			t.Fatalf("search(%q) = %d, %v; want %d", word, got, err, Search(wd, n))
		}
	}
	var r Record
	for _, id := range []int64{0, 1, n / 2, n - 1} {
		found, _, err := v.read(ctx, id, &r)
		if err != nil || !found || r != Generate(id) {
			t.Fatalf("read(%d) = %+v, %t, %v; want %+v", id, r, found, err, Generate(id))
		}
	}
	if found, _, err := v.read(ctx, n, &r); err != nil || found {
		t.Fatalf("read(%d) beyond the records: found %t, %v", n, found, err)
	}
}

// freshnessProbe runs one probe through a session: the writes, then the
// poll that Next must prepare next, without think time.
func freshnessProbe(t *testing.T, s *Session) {
	t.Helper()
	ctx := context.Background()
	s.op, s.prepared = OpFreshnessWrite, true
	if err := s.Do(ctx); err != nil {
		t.Fatalf("freshness write: %v", err)
	}
	if op, ok := s.Next(); !ok || op != OpFreshness {
		t.Fatalf("after the probe's writes Next gave %d, %t", op, ok)
	}
	if d, ok := s.Think(); !ok || d != 0 {
		t.Fatalf("the poll's think time: %s, %t", d, ok)
	}
	if err := s.Do(ctx); err != nil {
		t.Fatalf("freshness poll: %v", err)
	}
}

// corruption changes records behind the scenario's back: reads and counts
// that see them report integrity errors.
func corruption(t *testing.T, e *env) {
	ctx := context.Background()
	w := e.workload(t, "logs.load=true", "logs.records=500", "logs.indexes=on")
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	e.te.exec(t, e.conn, "UPDATE logs SET machine = 'intruder' WHERE id = 7", "DELETE FROM logs WHERE id = 8",
		"UPDATE logs SET message = 'tampered' WHERE id = 9")
	s := w.newSession(1)
	expectIntegrity := func(what string) {
		t.Helper()
		s.prepared = true
		err := s.Do(ctx)
		if !errors.Is(err, engine.ErrIntegrity) || metrics.ClassOf(err) != metrics.Integrity {
			t.Errorf("%s: %v (class %v), want an integrity error", what, err, metrics.ClassOf(err))
		}
	}
	for _, id := range []int64{7, 8, 9} {
		s.op, s.id = OpRead, id
		expectIntegrity(fmt.Sprintf("read of corrupted record %d", id))
	}
	r7 := Generate(7)
	s.op, s.a, s.m = OpCountB, int(7%NumTimestamps), int(7%NumMachines)
	s.lo, s.loBase = CountB(s.a, s.m, 500), CountB(s.a, s.m, 500)
	expectIntegrity("count_b over a record moved to another machine " + r7.Machine)
	s.op, s.a, s.a1 = OpErrorsPerHost, 0, 20
	s.hostLo, s.hostLoBase = ErrorsPerHost(0, 20, 500), ErrorsPerHost(0, 20, 500)
	if Generate(7).Severity <= ErrorSeverity || Generate(8).Severity <= ErrorSeverity {
		expectIntegrity("errors_per_host with a moved or deleted record")
	}
	s.op, s.word = OpSearch, int(9%NumWords)
	s.lo, s.loBase = Search(s.word, 500), Search(s.word, 500)
	expectIntegrity("search for the word a tampered message lost")
	// A record that is fine reads fine.
	s.op, s.id = OpRead, 10
	s.prepared = true
	if err := s.Do(ctx); err != nil {
		t.Errorf("read of an untouched record: %v", err)
	}
}

// TestBadMix checks that a bad logs.mix is a bad value naming the key.
func TestBadMix(t *testing.T) {
	t.Parallel()
	set := setting.NewSet((&Scenario{}).Settings()...)
	for _, bad := range []string{"wrte:1", "write:-1", "write:0", "", "read:x"} {
		err := set.Apply(KeyMix + "=" + bad)
		if !errors.Is(err, setting.ErrBadValue) || !strings.Contains(err.Error(), KeyMix) {
			t.Errorf("mix %q: %v", bad, err)
		}
	}
	if err := set.Apply(KeyMix + "=wrte:1"); err == nil || !strings.Contains(err.Error(), `did you mean "write"`) {
		t.Errorf("no suggestion: %v", err)
	}
	if err := set.Apply(KeyMix + "=freshness:1, read : 2"); err != nil {
		t.Errorf("good mix refused: %v", err)
	}
}
