package ycsb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/memory"
	"github.com/scalelab/scalelab/engine/null"
	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// storingEngines are the engines of Engines() with a test provider that
// keep data (all but null).
func storingEngines(t *testing.T) []string {
	var out []string
	for _, name := range (&Scenario{}).Engines() {
		if _, ok := enginetest.Lookup(name); !ok {
			t.Fatalf("engine %s has no test provider: register one (engine/enginetest)", name)
		}
		if name != null.Name {
			out = append(out, name)
		}
	}
	return out
}

// strict returns the assignments under which engine name's scans see every
// acknowledged write (enginetest.Provider.Strict) followed by more.
func strict(name string, more ...string) []string {
	p, _ := enginetest.Lookup(name)
	return append(slices.Clone(p.Strict), more...)
}

const conformanceRecords = 2000

// sizes returns the records and the operations per session of the suite
// for an engine: fewer for a slow store.
func sizes(name string) (records uint64, ops int) {
	if p, _ := enginetest.Lookup(name); p.Slow {
		return conformanceRecords / 5, 100
	}
	return conformanceRecords, 300
}

// TestConformance runs every workload with verification on each storing
// engine.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, name := range storingEngines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, wl := range []string{"a", "b", "c", "d", "e", "f"} {
				for _, order := range []string{"hashed", "ordered"} {
					t.Run(wl+"/"+order, func(t *testing.T) {
						conformance(t, name, wl, order)
					})
				}
			}
			t.Run("corruption", func(t *testing.T) { corruption(t, name) })
		})
	}
}

func conformance(t *testing.T, engineName, wl, order string) {
	ctx := context.Background()
	e := openEngine(t, engineName, strict(engineName)...)
	records, ops := sizes(engineName)
	w := e.Workload(t, "ycsb.workload="+wl, "ycsb.insert_order="+order, "ycsb.verify=true",
		fmt.Sprint("ycsb.records=", records), "ycsb.session_ops=0", "ycsb.max_scan_length=50")
	scenariotest.LoadAll(t, w, 3, int64(records))

	// Every loaded key reads back with the right values.
	s := w.newSession(99)
	for k := range records {
		s.key = appendKey(s.key[:0], k, w.cfg.ordered)
		s.field = -1
		if err := s.read(ctx); err != nil {
			t.Fatalf("reading loaded key %d: %v", k, err)
		}
	}

	// Sessions in parallel, with verification: no error at all.
	counts := scenariotest.ConcurrentSessions(t, w, 4, ops, 1000, nil)
	for op, p := range workloads[wl].props {
		if (p > 0) != (counts[op] > 0) {
			t.Errorf("workload %s did %d %s operations (proportion %g)", wl, counts[op], operationNames[op], p)
		}
	}

	// Inserted keys became readable.
	last := w.ctr.Last()
	if workloads[wl].props[OpInsert] > 0 && last < records {
		t.Errorf("no inserts acknowledged (last %d)", last)
	}
	for k := records; k <= last; k++ {
		s.key = appendKey(s.key[:0], k, w.cfg.ordered)
		s.field = -1
		if err := s.read(ctx); err != nil {
			t.Fatalf("reading inserted key %d: %v", k, err)
		}
	}

	// Scans return keys in order, from the start key, as many as asked.
	var all []string
	for k := uint64(0); k <= last; k++ {
		all = append(all, string(appendKey(nil, k, w.cfg.ordered)))
	}
	slices.Sort(all)
	for _, start := range []string{all[0], all[17], all[len(all)-3], "user", "user5"} {
		for _, field := range []int{-1, 3} {
			s.res.Reset(s.nf)
			s.key, s.field = append(s.key[:0], start...), field
			if err := s.st.Scan(ctx, s.key, 50, field, &s.res); err != nil {
				t.Fatal(err)
			}
			i, _ := slices.BinarySearch(all, start)
			want := all[i:min(i+50, len(all))]
			var got []string
			for r := range s.res.Len() {
				got = append(got, string(s.res.Key(r)))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("scan(%s, 50): %d keys %.3v, want %d keys %.3v", start, len(got), got, len(want), want)
			}
			if err := s.verify(true); err != nil {
				t.Fatalf("scan(%s, 50): %v", start, err)
			}
		}
	}

	// A missing key beyond the loaded records (an insert that may have
	// failed) is not found, classed not_found.
	s.key, s.field, s.keynum = append(s.key[:0], "nosuchkey"...), -1, s.w.cfg.records+1
	if err := s.read(ctx); !errors.Is(err, engine.ErrNotFound) || metrics.ClassOf(err) != metrics.NotFound {
		t.Errorf("read of a missing key: %v", err)
	}
	// A loaded record that has gone missing is a lost write: with verify,
	// an integrity error.
	if s.w.cfg.verify {
		s.keynum = 0
		if err := s.read(ctx); !errors.Is(err, engine.ErrIntegrity) || metrics.ClassOf(err) != metrics.Integrity {
			t.Errorf("read of a missing loaded record: %v", err)
		}
	}
}

// corruption writes garbage through the engine and checks that verifying
// reads, read-modify-writes and scans report engine.ErrIntegrity.
func corruption(t *testing.T, engineName string) {
	ctx := context.Background()
	e := openEngine(t, engineName, strict(engineName)...)
	w := e.Workload(t, "ycsb.verify=true", "ycsb.records=100")
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	key := string(appendKey(nil, 7, false))
	enginetest.Corrupt(t, e.Conn, "usertable", w.fieldNames, key, 0, "garbage")

	s := w.newSession(1)
	for _, op := range []int{OpRead, OpReadModifyWrite, OpScan} {
		s.op, s.prepared, s.key, s.field, s.wfield, s.scanN = op, true, append(s.key[:0], key...), -1, 0, 5
		s.buildValues(0)
		err := s.Do(ctx)
		if !errors.Is(err, engine.ErrIntegrity) || metrics.ClassOf(err) != metrics.Integrity {
			t.Errorf("%s of a corrupted record: %v (class %v)", operationNames[op], err, metrics.ClassOf(err))
		}
	}
	// Reading another field of the corrupted record is fine.
	s.op, s.prepared, s.key, s.field = OpRead, true, append(s.key[:0], key...), 1
	if err := s.Do(ctx); err != nil {
		t.Errorf("reading field1 of the corrupted record: %v", err)
	}
	// Unverified workloads do not check values.
	w2 := e.Workload(t, "ycsb.verify=false", "ycsb.load=false")
	s = w2.newSession(1)
	s.op, s.prepared, s.key, s.field = OpRead, true, append(s.key[:0], key...), -1
	if err := s.Do(ctx); err != nil {
		t.Errorf("unverified read of the corrupted record: %v", err)
	}
}

// TestSQLiteReopenKeepsData checks ycsb.load=false runs against the rows
// of an earlier load, and load=true starts clean.
func TestSQLiteReopenKeepsData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openEngine(t, "sqlite")
	w := e.Workload(t, "ycsb.records=300", "ycsb.verify=true")
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := e.Conn.(*sqlite.Conn).DB().QueryRow("SELECT count(*) FROM usertable").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	e.Workload(t, "ycsb.load=false")
	if n := count(); n != 300 {
		t.Fatalf("after reopening with load=false: %d rows", n)
	}
	e.Workload(t, "ycsb.load=true")
	if n := count(); n != 0 {
		t.Fatalf("after reopening with load=true: %d rows", n)
	}
}

// TestMemoryFaultsClassed checks that faults injected by the memory engine
// come out of sessions with the classes the engine was told to use.
func TestMemoryFaultsClassed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const records = 5000

	// Dropped writes during the load: about 2% of the keys are missing, and
	// reading them is not_found.
	e := openEngine(t, "memory", "memory.drop_writes=0.02")
	w := e.Workload(t, fmt.Sprint("ycsb.records=", records), "ycsb.workload=c")
	if err := w.Load(ctx, 4, nil); err != nil {
		t.Fatal(err)
	}
	missing := records - e.Conn.(*memory.Conn).Len()
	if missing < 50 || missing > 160 { // Binomial(5000, 0.02): 100 +- 10
		t.Fatalf("%d of %d records dropped, want about 100", missing, records)
	}
	s := w.newSession(1)
	notFound := 0
	for k := range uint64(records) {
		s.op, s.prepared, s.key, s.field = OpRead, true, appendKey(s.key[:0], k, false), -1
		err := s.Do(ctx)
		switch metrics.ClassOf(err) {
		case metrics.OK:
		case metrics.NotFound:
			notFound++
		default:
			t.Fatalf("read: %v", err)
		}
	}
	if notFound != missing {
		t.Errorf("%d reads not found, %d records missing", notFound, missing)
	}

	// Injected errors: about 30% of operations fail, classed rejected. The
	// load retries them, so every record is there.
	e = openEngine(t, "memory", "memory.error_rate=0.3", "memory.error_class=rejected")
	w = e.Workload(t, "ycsb.records=1000", "ycsb.workload=a", "ycsb.session_ops=0", "ycsb.verify=true")
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	if n := e.Conn.(*memory.Conn).Len(); n != 1000 {
		t.Fatalf("%d records loaded, want 1000", n)
	}
	var classes [metrics.NumClasses]int
	s = w.newSession(2)
	const ops = 10_000
	for range ops {
		s.Next()
		classes[metrics.ClassOf(s.Do(ctx))]++
	}
	if f := float64(classes[metrics.Rejected]) / ops; f < 0.27 || f > 0.33 {
		t.Errorf("rejected fraction %.3f, want 0.3 (classes %v)", f, classes)
	}
	if classes[metrics.Rejected]+classes[metrics.OK] != ops {
		t.Errorf("unexpected classes: %v", classes)
	}

	// Without a load, operations that are not rejected find no record.
	w = e.Workload(t, "ycsb.load=false", "ycsb.verify=false")
	e.Conn.(*memory.Conn).Clear()
	classes = [metrics.NumClasses]int{}
	s = w.newSession(3)
	for range ops {
		s.Next()
		classes[metrics.ClassOf(s.Do(ctx))]++
	}
	if classes[metrics.Rejected]+classes[metrics.NotFound] != ops || classes[metrics.Rejected] == 0 {
		t.Errorf("unexpected classes without data: %v", classes)
	}
}

// TestLoadCancelled checks Load stops with the context's error.
func TestLoadCancelled(t *testing.T) {
	t.Parallel()
	scenariotest.LoadCancels(t, openEngine(t, "memory").Workload(t, "ycsb.records=100000"))
}

// BenchmarkLoadSQLite measures loading 100k records into SQLite.
func BenchmarkLoadSQLite(b *testing.B) {
	e := openEngine(b, "sqlite")
	w := e.Workload(b, "ycsb.records=100000")
	for b.Loop() {
		if err := w.Load(context.Background(), 2, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := e.Conn.(*sqlite.Conn).DB().Exec("DELETE FROM usertable"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
