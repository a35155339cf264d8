package metrics

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// writeShardLog writes an interval log of values per 1 s interval (from
// values[i] for interval i) for tag "op", and returns its bytes.
func writeShardLog(t testing.TB, dir string, start time.Time, values [][]int64) []byte {
	t.Helper()
	path := filepath.Join(dir, "intervals.hlog")
	sink, err := NewHlogSink(path, start)
	if err != nil {
		t.Fatal(err)
	}
	for i, vs := range values {
		h, e := NewHist(), NewHist()
		for _, v := range vs {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		iv := &Interval{Index: i, StartNs: int64(i) * 1e9, EndNs: int64(i+1) * 1e9, Ops: []OpStats{{Name: "op", Lat: h, Err: e}}}
		if err := sink.Interval(iv); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMergeIntervalLogsEqualsOneHistogram: merging the interval logs of 4
// shards gives, per interval and over the run, exactly the histogram of
// every value recorded in one.
func TestMergeIntervalLogsEqualsOneHistogram(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now().Truncate(time.Millisecond)
	const shards, intervals = 4, 5
	all := NewHist()
	perInterval := make([]*hdr.Histogram, intervals)
	for i := range perInterval {
		perInterval[i] = NewHist()
	}
	var logs []HlogShard
	for s := range shards {
		values := make([][]int64, intervals)
		for i := range values {
			for range 500 + r.IntN(500) {
				v := int64(r.ExpFloat64()*2e6) + 1000 // ~2 ms, heavy tail
				values[i] = append(values[i], v)
				all.RecordValue(v)
				perInterval[i].RecordValue(v)
			}
		}
		// shards start up to 30 ms apart, as segments started together do
		st := start.Add(time.Duration(s*10) * time.Millisecond)
		logs = append(logs, HlogShard{Data: writeShardLog(t, t.TempDir(), st, values), OffsetS: st.Sub(start).Seconds()})
	}
	var merged bytes.Buffer
	ivs, tags, err := MergeIntervalLogs(logs, 0, start.UnixMilli(), &merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != intervals || !slices.Equal(tags, []string{"op"}) {
		t.Fatalf("%d intervals, tags %v; want %d, [op]", len(ivs), tags, intervals)
	}
	for i, iv := range ivs {
		want := perInterval[i]
		got := iv.Tags["op"]
		if got.Count != want.TotalCount() || *got.P99 != float64(want.ValueAtPercentile(99))/1e6 || *got.Max != float64(want.Max())/1e6 {
			t.Errorf("interval %d: count %d p99 %v max %v; one histogram: %d %v %v", i, got.Count, *got.P99, *got.Max,
				want.TotalCount(), float64(want.ValueAtPercentile(99))/1e6, float64(want.Max())/1e6)
		}
	}
	hl, err := ParseIntervalLog(merged.Bytes(), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := hl.Hists["op"]
	if got.TotalCount() != all.TotalCount() || !slices.Equal(got.Export().Counts, all.Export().Counts) {
		t.Fatalf("merged log: %d values, one histogram %d; the counts differ", got.TotalCount(), all.TotalCount())
	}
	for _, q := range []float64{50, 90, 99, 99.9, 100} {
		if a, b := got.ValueAtQuantile(q), all.ValueAtQuantile(q); a != b {
			t.Errorf("p%g: merged %d, one histogram %d", q, a, b)
		}
	}
	// the header holds whole seconds
	if st, err := HlogStart(merged.Bytes()); err != nil || !st.Equal(start.Truncate(time.Second)) {
		t.Errorf("merged start %v (%v), want %v", st, err, start.Truncate(time.Second))
	}
}

// TestMergeIntervalLogsWarmup: with a warm-up, measured intervals of the
// shards line up on the grid anchored at its end and stay measured.
func TestMergeIntervalLogsWarmup(t *testing.T) {
	start := time.Now().Truncate(time.Millisecond)
	values := [][]int64{{2000}, {3000}, {4000}, {5000}}
	logs := []HlogShard{
		{Data: writeShardLog(t, t.TempDir(), start, values)},
		{Data: writeShardLog(t, t.TempDir(), start.Add(20*time.Millisecond), values), OffsetS: 0.02},
	}
	var merged bytes.Buffer
	if _, _, err := MergeIntervalLogs(logs, 2, start.UnixMilli(), &merged); err != nil {
		t.Fatal(err)
	}
	hl, err := ParseIntervalLog(merged.Bytes(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if n := hl.Hists["op"].TotalCount(); n != 4 || hl.Intervals != 2 {
		t.Errorf("measured: %d values in %d intervals; want the 4 values of the 2 intervals after the warm-up", n, hl.Intervals)
	}
}
