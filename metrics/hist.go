// Package metrics records operation latencies in per-worker HdrHistograms
// without a lock on the hot path, collects them into 1-second intervals,
// streams those intervals (HdrHistogram interval log, per-second CSV, raw
// samples) and summarises them. It imports no other scalelab package.
package metrics

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: values are nanoseconds, discernible from 1 us up to 1 h,
// with 3 significant digits. Nanoseconds are HdrHistogram's convention, so
// its own tools (HistogramLogProcessor) print milliseconds by default.
const (
	LowestNs  = int64(1000)
	HighestNs = int64(3600) * 1_000_000_000
	SigFigs   = 3
)

// NewHist returns an empty latency histogram with scalelab's range.
func NewHist() *hdr.Histogram { return hdr.New(LowestNs, HighestNs, SigFigs) }

// clampNs keeps a value inside the histogram's range so that a record never
// fails: negative values (clock steps) become 0, huge ones the maximum.
func clampNs(v int64) int64 {
	if v < 0 {
		return 0
	}
	if v > HighestNs {
		return HighestNs
	}
	return v
}

// MinCountFor returns the smallest sample count that supports percentile p
// (0 < p < 100): a percentile p needs at least 1/(1-p) samples; below that
// it is reported as null rather than as a number the data cannot back.
func MinCountFor(p float64) int64 {
	return int64(math.Ceil(1/(1-p/100) - 1e-9))
}

// PercentileMs returns the p-th percentile of h in milliseconds, or nil when
// h holds too few samples to support it.
func PercentileMs(h *hdr.Histogram, p float64) *float64 {
	if h == nil || h.TotalCount() < MinCountFor(p) {
		return nil
	}
	v := nsToMs(h.ValueAtPercentile(p))
	return &v
}

func nsToMs(ns int64) float64 { return float64(ns) / 1e6 }

func ptr(f float64) *float64 { return &f }
