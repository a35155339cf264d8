package ycsb

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/scenariotest"
	"github.com/scalelab/scalelab/setting"
)

// openEngine opens a fresh store of engine name from its test provider
// with the assignments (engine and ycsb keys) applied.
func openEngine(t testing.TB, name string, assignments ...string) *scenariotest.Store[*Workload] {
	t.Helper()
	return scenariotest.NewStore[*Workload](t, &Scenario{}, name, assignments...)
}

func TestRegistered(t *testing.T) {
	t.Parallel()
	s, err := scenario.Lookup("ycsb")
	if err != nil {
		t.Fatal(err)
	}
	// Every engine with records, the test-only one (throwaway) included.
	got := s.Engines()
	for _, want := range []string{"cassandra", "elasticsearch", "memory", "null", "opensearch", "postgres", "sqlite", "throwaway"} {
		if !slices.Contains(got, want) {
			t.Errorf("Engines() = %v, want %s among them", got, want)
		}
	}
	// Every key is prefixed (the scenario's, or the cache's), and defaults
	// parse.
	for _, sp := range s.Settings() {
		if (!strings.HasPrefix(sp.Key, "ycsb.") && !strings.HasPrefix(sp.Key, "cache.")) || sp.Description == "" {
			t.Errorf("bad spec %+v", sp)
		}
	}
	setting.NewSet(s.Settings()...)
}

func TestOperations(t *testing.T) {
	t.Parallel()
	w := openEngine(t, "null").Workload(t)
	want := []string{"read", "update", "insert", "scan", "read_modify_write"}
	if got := w.Operations(); !slices.Equal(got, want) {
		t.Errorf("Operations() = %v", got)
	}
	if w.LoadSize() != 1000 {
		t.Errorf("LoadSize() = %d", w.LoadSize())
	}
	if w := openEngine(t, "null", "ycsb.load=false").Workload(t); w.LoadSize() != 0 {
		t.Errorf("LoadSize() with load=false = %d", w.LoadSize())
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	e := openEngine(t, "null", "ycsb.verify=true")
	_, err := (&Scenario{}).Open(context.Background(), scenario.Env{Engine: "null", Conn: e.Conn, Settings: e.Settings})
	if err == nil || !errors.Is(err, errVerifyNothing) {
		t.Errorf("verify on null: %v", err)
	}
	_, err = (&Scenario{}).Open(context.Background(), scenario.Env{Engine: "norecords", Conn: noRecords{}, Settings: e.Settings})
	if !errors.Is(err, scenario.ErrEngineNotSupported) || !strings.Contains(err.Error(), "sqlite") {
		t.Errorf("an engine without records: %v", err)
	}
	bad := setting.NewSet((&Scenario{}).Settings()...)
	if err := bad.Apply("ycsb.zipfian_constant=1"); !errors.Is(err, setting.ErrBadValue) {
		t.Errorf("zipfian_constant=1 accepted: %v", err)
	}
}

// noRecords is a connection without the records capability.
type noRecords struct{}

func (noRecords) Info(context.Context) (engine.Info, error) { return engine.Info{}, nil }
func (noRecords) Close() error                              { return nil }

func TestWorkloadDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		assign  []string
		dist    string
		maxScan int
	}{
		{[]string{"ycsb.workload=a"}, "zipfian", 1000},
		{[]string{"ycsb.workload=d"}, "latest", 1000},
		{[]string{"ycsb.workload=e"}, "zipfian", 100},
		{[]string{"ycsb.workload=e", "ycsb.max_scan_length=1000"}, "zipfian", 1000},
		{[]string{"ycsb.workload=d", "ycsb.distribution=uniform"}, "uniform", 1000},
	} {
		cfg := testConfig(t, tc.assign...)
		if cfg.dist != tc.dist || cfg.maxScan != tc.maxScan {
			t.Errorf("%v: dist %s maxScan %d, want %s %d", tc.assign, cfg.dist, cfg.maxScan, tc.dist, tc.maxScan)
		}
	}
}

func TestSessionOps(t *testing.T) {
	t.Parallel()
	w := openEngine(t, "null", "ycsb.session_ops=3").Workload(t)
	s := w.NewSession(1, 1)
	if err := s.Do(context.Background()); !errors.Is(err, errNotPrepared) {
		t.Errorf("Do before Next: %v", err)
	}
	for i := range 3 {
		if _, ok := s.Next(); !ok {
			t.Fatalf("session ended after %d ops", i)
		}
		if err := s.Do(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := s.Next(); ok {
		t.Error("session did not end after 3 ops")
	}
	s = openEngine(t, "null", "ycsb.session_ops=0").Workload(t).NewSession(2, 2)
	for range 1000 {
		if _, ok := s.Next(); !ok {
			t.Fatal("session with session_ops=0 ended")
		}
	}
}

// TestSessionsDeterministic checks that a session's choices depend on its
// seed only.
func TestSessionsDeterministic(t *testing.T) {
	t.Parallel()
	scenariotest.Seeded(t, "sessions", 5, 6, func(seed uint64) []string {
		w := openEngine(t, "null", "ycsb.workload=b", "ycsb.session_ops=0", "ycsb.read_all_fields=false").Workload(t)
		s := w.newSession(seed)
		var out []string
		for range 200 {
			op, _ := s.Next()
			out = append(out, operationNames[op]+string(s.key)+string(rune('0'+s.field)))
		}
		return out
	})
}

// TestNullSessionsAllocationFree checks that every workload's Next and Do
// allocate nothing on the null engine.
func TestNullSessionsAllocationFree(t *testing.T) {
	for _, wl := range []string{"a", "b", "c", "d", "e", "f"} {
		for _, extra := range [][]string{nil, {"ycsb.read_all_fields=false", "ycsb.write_all_fields=true", "ycsb.scan_length_distribution=zipfian"}} {
			w := openEngine(t, "null", append([]string{"ycsb.workload=" + wl, "ycsb.session_ops=0"}, extra...)...).Workload(t)
			s := w.NewSession(1, 1)
			ctx := context.Background()
			step := func() {
				s.Next()
				if err := s.Do(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for range 1000 { // warm the buffers up
				step()
			}
			if a := testing.AllocsPerRun(10_000, step); a != 0 {
				t.Errorf("workload %s %v: %.2f allocations per op", wl, extra, a)
			}
		}
	}
}

func BenchmarkSessionNullWorkloadC(b *testing.B) {
	w := openEngine(b, "null", "ycsb.workload=c", "ycsb.session_ops=0", "ycsb.records=1000000").Workload(b)
	s := w.NewSession(1, 1)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.Next()
		if err := s.Do(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSessionNullWorkloadCParallel(b *testing.B) {
	w := openEngine(b, "null", "ycsb.workload=c", "ycsb.session_ops=0", "ycsb.records=1000000").Workload(b)
	ctx := context.Background()
	var id uint64
	var mu = make(chan struct{}, 1)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		mu <- struct{}{}
		id++
		s := w.NewSession(id, id)
		<-mu
		for pb.Next() {
			s.Next()
			if err := s.Do(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSessionNull measures Next+Do for every workload on null.
func BenchmarkSessionNull(b *testing.B) {
	for _, wl := range []string{"a", "b", "c", "d", "e", "f"} {
		b.Run(wl, func(b *testing.B) {
			w := openEngine(b, "null", "ycsb.workload="+wl, "ycsb.session_ops=0", "ycsb.records=1000000").Workload(b)
			s := w.NewSession(1, 1)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				s.Next()
				s.Do(ctx)
			}
		})
	}
}

// BenchmarkNewSession measures starting a session (what a short session
// costs the phases model).
func BenchmarkNewSession(b *testing.B) {
	w := openEngine(b, "null", "ycsb.workload=c").Workload(b)
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		w.NewSession(i, i)
	}
}
