// Package resultstest reads and writes the files of a results directory
// for tests, stopping the test on any error.
package resultstest

import (
	"bytes"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// Read returns the run.json document of the results directory dir.
func Read(tb testing.TB, dir string) *results.Run {
	tb.Helper()
	r, err := results.Read(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// Write writes r as the run.json document of the results directory dir.
func Write(tb testing.TB, dir string, r *results.Run) {
	tb.Helper()
	if err := results.WriteJSON(filepath.Join(dir, results.RunFile), r); err != nil {
		tb.Fatal(err)
	}
}

// ReadCSV returns every record of the CSV file at path, its header first.
func ReadCSV(tb testing.TB, path string) [][]string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	return rows
}

// WriteIntervals creates dir where it is missing and writes its
// intervals.hlog (starting at start) and series.csv with the sinks a run
// writes them with: the n intervals next returns for 0 to n-1, in order.
// next may return the same Interval each time, refilled.
func WriteIntervals(tb testing.TB, dir string, start time.Time, n int, next func(i int) *metrics.Interval) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	hlog, err := metrics.NewHlogSink(filepath.Join(dir, results.HlogFile), start)
	if err != nil {
		tb.Fatal(err)
	}
	series, err := metrics.NewSeriesSink(filepath.Join(dir, results.SeriesFile))
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		iv := next(i)
		if err := hlog.Interval(iv); err != nil {
			tb.Fatal(err)
		}
		if err := series.Interval(iv); err != nil {
			tb.Fatal(err)
		}
	}
	if err := hlog.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := series.Close(); err != nil {
		tb.Fatal(err)
	}
}

// HlogIntervals returns the interval histograms of data, the contents of
// an intervals.hlog, in order, as hdrhistogram-go's own log reader reads
// them.
func HlogIntervals(tb testing.TB, data []byte) []*hdr.Histogram {
	tb.Helper()
	rd := hdr.NewHistogramLogReader(bytes.NewReader(data))
	var hists []*hdr.Histogram
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil && err != io.EOF {
			tb.Fatal(err)
		}
		if h == nil {
			return hists
		}
		hists = append(hists, h)
	}
}
