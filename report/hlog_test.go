package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// libraryMerge merges the log with hdrhistogram-go's own reader, as the
// reference the fast reader must match.
func libraryMerge(t *testing.T, data []byte, warmupS float64) map[string]*hdr.Histogram {
	t.Helper()
	out := map[string]*hdr.Histogram{}
	var base float64
	for _, h := range resultstest.HlogIntervals(t, data) {
		if base == 0 {
			base = float64(h.StartTimeMs()) / 1000
		}
		if float64(h.StartTimeMs())/1000-base < warmupS-0.0005 {
			continue
		}
		m := out[h.Tag()]
		if m == nil {
			m = hdr.New(1000, 3600e9, 3)
			out[h.Tag()] = m
		}
		m.Merge(h)
	}
	return out
}

func TestReadIntervalLogMatchesLibrary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    synth
	}{
		{"closed", synth{intervals: 12, ops: []string{"read", "update"}, perOp: 300, errEvery: 37}},
		{"open with warm-up", synth{intervals: 12, ops: []string{"a.get", "b.post", "c.scan"}, perOp: 200, errEvery: 11, open: true, warmup: 3}},
		{"one op, one interval", synth{intervals: 1, ops: []string{"x"}, perOp: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, totals := tc.s.write(t, dir)
			data, err := os.ReadFile(filepath.Join(dir, results.HlogFile))
			if err != nil {
				t.Fatal(err)
			}
			log, err := metrics.ReadIntervalLog(filepath.Join(dir, results.HlogFile), float64(tc.s.warmup))
			if err != nil {
				t.Fatal(err)
			}
			want := libraryMerge(t, data, float64(tc.s.warmup))
			if len(log.Hists) != len(want) {
				t.Fatalf("tags %v, library %d tags", log.Tags, len(want))
			}
			for tag, w := range want {
				g := log.Hists[tag]
				if g == nil || !g.Equals(w) {
					t.Errorf("%s: merged histogram differs from the library's (count %d vs %d)", tag, countOf(g), w.TotalCount())
				}
			}
			for op, tot := range totals {
				if g := log.Hists[op]; countOf(g) != tot.Lat.TotalCount() {
					t.Errorf("%s: count %d, recorded %d", op, countOf(g), tot.Lat.TotalCount())
				}
			}
			if log.Intervals != tc.s.intervals-tc.s.warmup || log.All != tc.s.intervals || log.Torn {
				t.Errorf("intervals %d (all %d, torn %v), want %d", log.Intervals, log.All, log.Torn, tc.s.intervals-tc.s.warmup)
			}
			if got, want := log.MeasuredS(float64(tc.s.warmup)), float64(tc.s.intervals-tc.s.warmup); got < want-0.01 || got > want+0.01 {
				t.Errorf("measured %.3f s, want %.0f", got, want)
			}
			// several decoding goroutines merge to the same histograms
			for _, workers := range []int{1, 3} {
				par, err := metrics.ParseIntervalLogWorkers(data, float64(tc.s.warmup), workers)
				if err != nil {
					t.Fatal(err)
				}
				for tag, w := range want {
					if g := par.Hists[tag]; g == nil || !g.Equals(w) {
						t.Errorf("%d workers: %s differs", workers, tag)
					}
				}
			}
		})
	}
}

func countOf(h *hdr.Histogram) int64 {
	if h == nil {
		return -1
	}
	return h.TotalCount()
}

func TestReadIntervalLogTornAndCorrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	synth{intervals: 4, ops: []string{"read"}, perOp: 200}.write(t, dir)
	path := filepath.Join(dir, results.HlogFile)
	data, _ := os.ReadFile(path)
	whole, err := metrics.ParseIntervalLog(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	lastLine := data[bytes.LastIndexByte(data[:len(data)-1], '\n')+1:]
	for _, tc := range []struct {
		name      string
		data      []byte
		wantErr   string
		wantTorn  bool
		wantCount int64
	}{
		{"torn last line", append(append([]byte{}, data...), lastLine[:len(lastLine)/2]...), "", true, whole.Hists["read"].TotalCount()},
		{"no newline at all", []byte("#[StartTime: 1 (seconds"), "", true, -1},
		{"empty", nil, "", false, -1},
		{"corrupt payload", bytes.Replace(data, []byte("HISTF"), []byte("HIZTF"), 1), "line", false, 0},
		{"missing fields", append(append([]byte{}, data...), []byte("Tag=read,1.0\n")...), "fields", false, 0},
		{"bad time", append(append([]byte{}, data...), []byte("Tag=read,x,1,1,HISTF\n")...), "start time", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, err := metrics.ParseIntervalLog(tc.data, 0)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if log.Torn != tc.wantTorn || countOf(log.Hists["read"]) != tc.wantCount {
				t.Errorf("torn %v count %d", log.Torn, countOf(log.Hists["read"]))
			}
		})
	}
}

// FuzzIntervalLog: no input makes the reader panic.
func FuzzIntervalLog(f *testing.F) {
	dir := f.TempDir()
	synth{intervals: 2, ops: []string{"read"}, perOp: 20, errEvery: 3}.write(f, dir)
	data, _ := os.ReadFile(filepath.Join(dir, results.HlogFile))
	f.Add(data)
	f.Add([]byte("Tag=a,0,1,1,HISTFAAAAB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = metrics.ParseIntervalLog(b, 0)
	})
}
