package metrics

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// OpSummary is one operation's figures over the measured window, as written
// to run.json. Latencies are in milliseconds from the intended start; in
// open models the service_* fields (from the actual start) stand beside
// them. A percentile the sample count cannot support is null.
type OpSummary struct {
	Op            string           `json:"op"`
	Started       int64            `json:"started"`
	Count         int64            `json:"count"` // OK operations
	Errors        int64            `json:"errors"`
	ErrorsByClass map[string]int64 `json:"errors_by_class"`
	InFlight      int64            `json:"in_flight"`               // still running at the stop
	ErrorSamples  []string         `json:"error_samples,omitempty"` // the first distinct error messages
	Late          int64            `json:"late,omitempty"`
	// Composite describes an operation made of other operations and the
	// waits between them, as the client observed it (scenario.Composer);
	// its operations are counted on their own, so totals leave it out.
	Composite      string  `json:"composite,omitempty"`
	ThroughputPerS float64 `json:"throughput_per_s"`
	Latencies
	*Service      // open models only
	*ErrorLatency // when some operations failed
}

// Latencies is a set of latency figures in milliseconds.
type Latencies struct {
	MeanMs *float64 `json:"mean_ms"`
	P50Ms  *float64 `json:"p50_ms"`
	P90Ms  *float64 `json:"p90_ms"`
	P95Ms  *float64 `json:"p95_ms"`
	P99Ms  *float64 `json:"p99_ms"`
	P999Ms *float64 `json:"p999_ms"`
	MaxMs  *float64 `json:"max_ms"`
}

// Service holds service times (from the actual start) in open models.
type Service struct {
	ServiceMeanMs *float64 `json:"service_mean_ms"`
	ServiceP50Ms  *float64 `json:"service_p50_ms"`
	ServiceP90Ms  *float64 `json:"service_p90_ms"`
	ServiceP95Ms  *float64 `json:"service_p95_ms"`
	ServiceP99Ms  *float64 `json:"service_p99_ms"`
	ServiceP999Ms *float64 `json:"service_p999_ms"`
	ServiceMaxMs  *float64 `json:"service_max_ms"`
}

// ErrorLatency holds how long failed operations took to fail.
type ErrorLatency struct {
	ErrorMeanMs *float64 `json:"error_mean_ms"`
	ErrorP50Ms  *float64 `json:"error_p50_ms"`
	ErrorP99Ms  *float64 `json:"error_p99_ms"`
	ErrorMaxMs  *float64 `json:"error_max_ms"`
}

func latencies(h *hdr.Histogram) Latencies {
	var l Latencies
	if h == nil || h.TotalCount() == 0 {
		return l
	}
	l.MeanMs = ptr(h.Mean() / 1e6)
	l.MaxMs = ptr(nsToMs(h.Max()))
	l.P50Ms = PercentileMs(h, 50)
	l.P90Ms = PercentileMs(h, 90)
	l.P95Ms = PercentileMs(h, 95)
	l.P99Ms = PercentileMs(h, 99)
	l.P999Ms = PercentileMs(h, 99.9)
	return l
}

// Summarize turns totals into per-operation summaries. inFlight gives, per
// operation, how many were still running at the stop; they are part of
// Started, so that for every operation Count + Errors + InFlight = Started.
// Operations that never ran are left out.
func Summarize(totals []OpStats, measured time.Duration, inFlight []int64) []OpSummary {
	var out []OpSummary
	for i := range totals {
		o := &totals[i]
		var inf int64
		if i < len(inFlight) {
			inf = inFlight[i]
		}
		s := OpSummary{Op: o.Name, Count: o.Count(), Errors: o.Errors(), InFlight: inf, Late: o.Late,
			ErrorsByClass: map[string]int64{}}
		s.Started = s.Count + s.Errors + s.InFlight
		if s.Started == 0 {
			continue
		}
		for _, c := range ErrorClasses() {
			if n := o.Errs[c]; n > 0 {
				s.ErrorsByClass[c.String()] = n
			}
		}
		if measured > 0 {
			s.ThroughputPerS = float64(s.Count) / measured.Seconds()
		}
		s.Latencies = latencies(o.Lat)
		if o.Svc != nil {
			sl := latencies(o.Svc)
			s.Service = &Service{sl.MeanMs, sl.P50Ms, sl.P90Ms, sl.P95Ms, sl.P99Ms, sl.P999Ms, sl.MaxMs}
		}
		if o.Err != nil && o.Err.TotalCount() > 0 {
			el := latencies(o.Err)
			s.ErrorLatency = &ErrorLatency{el.MeanMs, el.P50Ms, el.P99Ms, el.MaxMs}
		}
		out = append(out, s)
	}
	return out
}

// LagSummary describes how far behind schedule operations started in an
// open model.
type LagSummary struct {
	Count  int64    `json:"count"`
	P50Ms  *float64 `json:"p50_ms"`
	P99Ms  *float64 `json:"p99_ms"`
	P999Ms *float64 `json:"p999_ms"`
	MaxMs  *float64 `json:"max_ms"`
}

// SummarizeLag summarises a scheduling-lag histogram.
func SummarizeLag(h *hdr.Histogram) LagSummary {
	s := LagSummary{Count: h.TotalCount()}
	if s.Count > 0 {
		s.MaxMs = ptr(nsToMs(h.Max()))
	}
	s.P50Ms = PercentileMs(h, 50)
	s.P99Ms = PercentileMs(h, 99)
	s.P999Ms = PercentileMs(h, 99.9)
	return s
}
