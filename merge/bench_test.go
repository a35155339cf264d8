package merge

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// synthShard writes the results directory of one segment of a run of
// seconds intervals with four operations whose latencies spread over
// three orders of magnitude, as the real sinks write it.
func synthShard(b *testing.B, dir string, idx, n, seconds int, at time.Time) {
	b.Helper()
	r := rand.New(rand.NewPCG(uint64(idx), 7))
	ops := []string{"read", "update", "insert", "scan"}
	summary := map[string]metrics.OpSummary{}
	resultstest.WriteIntervals(b, dir, at, seconds, func(s int) *metrics.Interval {
		iv := &metrics.Interval{Index: s, StartNs: int64(s) * 1e9, EndNs: int64(s+1) * 1e9, Sessions: 8}
		for _, op := range ops {
			lat, e := metrics.NewHist(), metrics.NewHist()
			for range 300 {
				lat.RecordValue(int64(r.ExpFloat64()*float64(500*time.Microsecond)) + int64(50*time.Microsecond))
			}
			iv.Ops = append(iv.Ops, metrics.OpStats{Name: op, Lat: lat, Err: e})
			o := summary[op]
			o.Op, o.Count, o.Started = op, o.Count+300, o.Started+300
			summary[op] = o
		}
		return iv
	})
	start := at.Add(time.Duration(idx) * time.Millisecond)
	run := &results.Run{Status: results.StatusOK, Scenario: "ycsb", Engine: "null", Summary: summary,
		Load:    results.Load{Model: "closed", Params: map[string]any{"users": 64}, DurationS: float64(seconds)},
		Segment: &results.Segment{Index: idx, Count: n, TestHash: "bench", StartAt: &at, LoadStart: &start, StartLateMs: float64(idx)},
		Start:   at}
	resultstest.Write(b, dir, run)
}

// BenchmarkMerge16x10min merges 16 segments of a 10-minute run (600
// one-second intervals of 4 operations each: 38,400 interval histograms).
func BenchmarkMerge16x10min(b *testing.B) {
	const n, seconds = 16, 600
	base := b.TempDir()
	at := time.Now().Truncate(time.Second)
	dirs := make([]string, n)
	for i := range n {
		dirs[i] = filepath.Join(base, fmt.Sprintf("shard-%d", i))
		synthShard(b, dirs[i], i, n, seconds, at)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		doc, err := Merge(dirs, filepath.Join(base, fmt.Sprintf("merged-%d", i)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if want := int64(n * seconds * 4 * 300); doc.Totals.Count != want {
			b.Fatalf("merged %d operations, want %d", doc.Totals.Count, want)
		}
	}
}
