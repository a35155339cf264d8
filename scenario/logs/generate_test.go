package logs

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// TestDistinct checks the study's claim: the first 7,495,861 records are
// distinct combinations of timestamp, machine, service and severity entry,
// and record 7,495,861 repeats record 0.
func TestDistinct(t *testing.T) {
	t.Parallel()
	if Distinct != 7_495_861 {
		t.Fatalf("Distinct = %d", Distinct)
	}
	crt := newCRT(NumTimestamps, NumMachines, NumServices, NumSeverities)
	seen := make([]bool, Distinct)
	for i := int64(0); i < Distinct; i++ {
		x := crt.of(i%NumTimestamps, i%NumMachines, i%NumServices, i%NumSeverities)
		if x != i || seen[x] {
			t.Fatalf("record %d maps to %d (seen %t)", i, x, seen[x])
		}
		seen[x] = true
	}
	a, b := Generate(0), Generate(Distinct)
	if a.Timestamp != b.Timestamp || a.Machine != b.Machine || a.Service != b.Service || a.Severity != b.Severity {
		t.Errorf("record %d is not record 0 again: %+v %+v", Distinct, a, b)
	}
}

// TestRecords checks field limits, distinct list values and the messages:
// 255 characters holding exactly one search word between spaces.
func TestRecords(t *testing.T) {
	t.Parallel()
	for _, list := range [][]string{Machines(), Services(), Words()} {
		sorted := slices.Clone(list)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(list) {
			t.Errorf("duplicate values in %v", list)
		}
	}
	for _, m := range Machines() {
		if len(m) > MaxMachineLen {
			t.Errorf("machine %q too long", m)
		}
	}
	for _, s := range Services() {
		if len(s) > MaxServiceLen {
			t.Errorf("service %q too long", s)
		}
	}
	check := func(r Record, want int) {
		t.Helper()
		if len(r.Message) != MessageLen || r.Severity < 0 || r.Severity > MaxSeverity || r.Timestamp < 1e9 || r.Timestamp >= 1e10 {
			t.Fatalf("record %+v", r)
		}
		found := -1
		for w, word := range words {
			n := strings.Count(" "+r.Message+" ", " "+word+" ")
			tokens := strings.FieldsFunc(r.Message, func(c rune) bool { return !(c >= 'a' && c <= 'z') })
			if slices.Contains(tokens, word) != (n > 0) || n > 1 {
				t.Fatalf("record %d: word %q appears %d times between spaces, as a token: %t", r.ID, word, n, slices.Contains(tokens, word))
			}
			if n == 1 {
				if found >= 0 {
					t.Fatalf("record %d holds %q and %q", r.ID, words[found], word)
				}
				found = w
			}
		}
		if found != want {
			t.Fatalf("record %d: word %d, want %d: %q", r.ID, found, want, r.Message)
		}
	}
	for i := int64(0); i < 3000; i++ {
		r := Generate(i)
		if r.ID != i || r.Timestamp != Timestamp(int(i%NumTimestamps)) {
			t.Fatalf("record %d: %+v", i, r)
		}
		check(r, int(i%NumWords))
	}
	check(Generate(123_456_789_012), int(123_456_789_012%NumWords))
	for j := int64(0); j < 50; j++ {
		r := freshRecord(3, j, 50)
		check(r, -1)
		if r.Timestamp != FreshBase+3 || r.ID >= 0 || r.Timestamp >= BaseTimestamp {
			t.Fatalf("fresh record %+v", r)
		}
	}
	if freshRecord(1, 49, 50).ID == freshRecord(2, 0, 50).ID {
		t.Error("probes share record ids")
	}
}

// TestGroundTruth compares every count formula with brute force over the
// generated records, at sizes around the moduli.
func TestGroundTruth(t *testing.T) {
	t.Parallel()
	const max = 30_000
	recs := make([]Record, max)
	for i := range recs {
		recs[i] = Generate(int64(i))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int64{0, 1, 1008, 1009, 1010, 23207, 23208, max} {
		for range 20 {
			a, m, s, v, w := r.IntN(NumTimestamps), r.IntN(NumMachines), r.IntN(NumServices), r.IntN(MaxSeverity+1), r.IntN(NumWords)
			a1 := min(a+r.IntN(15), NumTimestamps-1)
			var ca, cb, cc, cs int64
			var hosts [NumMachines]int64
			for _, rec := range recs[:n] {
				if rec.Timestamp == Timestamp(a) {
					ca++
					if rec.Machine == machines[m] {
						cb++
					}
					if rec.Service == services[s] && rec.Severity == v {
						cc++
					}
				}
				if rec.Timestamp >= Timestamp(a) && rec.Timestamp <= Timestamp(a1) && rec.Severity <= ErrorSeverity {
					hosts[slices.Index(machines[:], rec.Machine)]++
				}
				if strings.Contains(rec.Message, " "+words[w]+" ") {
					cs++
				}
			}
			if got := CountA(a, n); got != ca {
				t.Fatalf("n=%d CountA(%d) = %d, want %d", n, a, got, ca)
			}
			if got := CountB(a, m, n); got != cb {
				t.Fatalf("n=%d CountB(%d, %d) = %d, want %d", n, a, m, got, cb)
			}
			if got := CountC(a, s, v, n); got != cc {
				t.Fatalf("n=%d CountC(%d, %d, %d) = %d, want %d", n, a, s, v, got, cc)
			}
			if got := ErrorsPerHost(a, a1, n); got != hosts {
				t.Fatalf("n=%d ErrorsPerHost(%d, %d) = %v, want %v", n, a, a1, got, hosts)
			}
			if got := Search(w, n); got != cs {
				t.Fatalf("n=%d Search(%d) = %d, want %d", n, w, got, cs)
			}
		}
	}
}

// TestIDTracker checks the acknowledged prefix with writes finishing out of
// order and a failed write, from many goroutines.
func TestIDTracker(t *testing.T) {
	t.Parallel()
	var tr idTracker
	tr.init(100)
	a, b, c := tr.take(1), tr.take(10), tr.take(1)
	if a != 100 || b != 101 || c != 111 || tr.issued.Load() != 112 {
		t.Fatalf("take: %d %d %d", a, b, c)
	}
	tr.done(c, 1)
	tr.done(b, 10)
	if tr.prefix.Load() != 100 {
		t.Fatalf("prefix moved past an unacknowledged write: %d", tr.prefix.Load())
	}
	tr.done(a, 1)
	if tr.prefix.Load() != 112 {
		t.Fatalf("prefix %d, want 112", tr.prefix.Load())
	}
	// Concurrent writes, one failing: the prefix stops at the failure.
	var wg sync.WaitGroup
	var failedAt sync.Once
	fail := int64(-1)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 500 {
				id := tr.take(2)
				if g == 3 && k == 250 {
					failedAt.Do(func() { fail = id })
					tr.failed(id)
					continue
				}
				tr.done(id, 2)
			}
		}()
	}
	wg.Wait()
	if tr.prefix.Load() != fail || tr.failures.Load() != 1 || len(tr.pending) > 0 && minKey(tr.pending) < fail {
		t.Fatalf("prefix %d, failure at %d, %d failures, pending %d", tr.prefix.Load(), fail, tr.failures.Load(), len(tr.pending))
	}
}

func minKey(m map[int64]int64) int64 {
	k := int64(1 << 62)
	for s := range m {
		k = min(k, s)
	}
	return k
}

// TestOperationsAndMix checks the operation names and that the chooser
// follows the weights.
func TestOperationsAndMix(t *testing.T) {
	t.Parallel()
	s, err := scenario.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range s.Settings() {
		if !strings.HasPrefix(sp.Key, Name+".") || sp.Description == "" {
			t.Errorf("bad spec %+v", sp)
		}
	}
	setting.NewSet(s.Settings()...)
	w := &Workload{}
	for i, op := range w.Operations() {
		if !strings.HasPrefix(op, "logs.") || operationNames[i] != op {
			t.Errorf("operation %d: %q", i, op)
		}
	}
	mix, err := parseMix("write:3,read:1,freshness:0")
	if err != nil {
		t.Fatal(err)
	}
	c := kit.NewChooser(mix[:])
	r := rand.New(rand.NewPCG(3, 4))
	var n [numOps]int
	for range 40000 {
		n[c.NextU(r.Float64())]++
	}
	if n[OpFreshnessWrite] != 0 || n[OpWrite] < 29000 || n[OpWrite] > 31000 || n[OpWrite]+n[OpRead] != 40000 {
		t.Errorf("chosen: %v", n)
	}
}

// TestDistribution checks the report's summaries, percentiles hidden below
// their sample count.
func TestDistribution(t *testing.T) {
	t.Parallel()
	d := distribution([]float64{5, 1, 3})
	if d["min"] != 1.0 || d["max"] != 5.0 || d["mean"] != 3.0 || d["p50"] != 3.0 || d["p90"] != nil || d["p99"] != nil {
		t.Errorf("%v", d)
	}
	v := make([]float64, 100)
	for i := range v {
		v[i] = float64(i + 1)
	}
	d = distribution(v)
	if d["p90"] != 90.0 || d["p99"] != 99.0 || d["p50"] != 50.0 {
		t.Errorf("%v", d)
	}
	if d := distribution(nil); d["count"] != 0 || d["min"] != nil {
		t.Errorf("%v", d)
	}
}
