// Package liveexport exposes a run's figures while it goes, for the
// team's Prometheus and Grafana: operations, errors by class, latency
// histograms and quantiles per operation, sessions, schedule lag and the
// write audit's counts, labelled with the run's scenario, engine and
// segment. They are served for scraping (Serve, --metrics-listen) and/or
// pushed by Prometheus remote write (push.go, --metrics-push). The
// figures are taken from the collector's closed intervals, once a second,
// off the operations' hot path.
package liveexport

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/metrics"
)

// Labels name the run every series carries.
type Labels struct {
	Scenario, Engine string
	Segment          string // the segment's index ("0" for an undivided run)
	Segments         string // how many segments the test has ("1")
}

// Buckets are the classic histogram's upper bounds, in seconds: 100 µs
// to about 100 s, four per factor of ten.
var Buckets = prometheus.ExponentialBuckets(100e-6, 1.778279, 25)

// Quantiles are those of the latency summary, as run.json gives them.
var Quantiles = []float64{0.5, 0.9, 0.95, 0.99, 0.999}

// Exporter is a metrics.Sink and a prometheus.Collector: it adds each
// measured interval to the run's totals and describes them at a scrape.
type Exporter struct {
	lab Labels
	mu  sync.Mutex
	ops []*opTotals
	idx map[string]int
	lag *hdr.Histogram
	// warm-up included: operations seen at all, for a dashboard's rate
	// from the first second
	sessions  int64
	intervals int64
	measured  float64 // seconds of measured intervals
	audit     func() audit.LiveCounts

	descOps, descErrs, descLat, descQ, descSess, descLag, descLate, descAudit, descUp, descMeas *prometheus.Desc
}

type opTotals struct {
	name    string
	ok      int64
	errs    [metrics.NumClasses]int64
	late    int64
	lat     *hdr.Histogram
	warmOps int64 // operations in the warm-up (not in the totals)
}

// New returns an exporter for a run of ops, labelled lab.
func New(lab Labels, ops []string) *Exporter {
	c := prometheus.Labels{"scenario": lab.Scenario, "engine": lab.Engine, "segment": lab.Segment, "segments": lab.Segments}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, c)
	}
	e := &Exporter{lab: lab, idx: map[string]int{}, lag: metrics.NewHist(),
		descOps:   d("scalelab_operations_total", "Operations that succeeded in the measured window (the warm-up excluded, as run.json counts them).", "op"),
		descErrs:  d("scalelab_errors_total", "Operations that failed in the measured window, by error class.", "op", "class"),
		descLat:   d("scalelab_latency_seconds", "Latency of the operations that succeeded, from their intended start (classic histogram).", "op"),
		descQ:     d("scalelab_latency_quantile_seconds", "Latency quantiles over the measured window, from the run's HdrHistogram (the run.json figures).", "op"),
		descSess:  d("scalelab_sessions", "Concurrent sessions (virtual users) at the end of the last interval."),
		descLag:   d("scalelab_schedule_lag_seconds", "Open models: how late operations started after their intended start."),
		descLate:  d("scalelab_late_operations_total", "Open models: operations that started more than 10 ms late.", "op"),
		descAudit: d("scalelab_audit_writes_total", "Writes the acknowledged-write audit logged, by outcome.", "outcome"),
		descUp:    d("scalelab_run_intervals_total", "Intervals the collector closed (one a second), the warm-up included."),
		descMeas:  d("scalelab_measured_seconds", "Seconds of the measured window so far."),
	}
	for _, op := range ops {
		e.op(op)
	}
	return e
}

func (e *Exporter) op(name string) *opTotals {
	if i, ok := e.idx[name]; ok {
		return e.ops[i]
	}
	o := &opTotals{name: name, lat: metrics.NewHist()}
	e.idx[name] = len(e.ops)
	e.ops = append(e.ops, o)
	return o
}

// WatchAudit makes the exporter report the write audit's counts.
func (e *Exporter) WatchAudit(f func() audit.LiveCounts) {
	e.mu.Lock()
	e.audit = f
	e.mu.Unlock()
}

// Interval adds a closed interval (metrics.Sink): measured ones to the
// totals.
func (e *Exporter) Interval(iv *metrics.Interval) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.intervals++
	e.sessions = iv.Sessions
	for i := range iv.Ops {
		s := &iv.Ops[i]
		o := e.op(s.Name)
		if iv.Warmup {
			o.warmOps += s.Count() + s.Errors()
			continue
		}
		o.ok += s.Count()
		for c, n := range s.Errs {
			o.errs[c] += n
		}
		o.late += s.Late
		o.lat.Merge(s.Lat)
	}
	if !iv.Warmup {
		e.measured += float64(iv.EndNs-iv.StartNs) / 1e9
		if iv.Lag != nil {
			e.lag.Merge(iv.Lag)
		}
	}
	return nil
}

// Describe sends the descriptors (prometheus.Collector).
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{e.descOps, e.descErrs, e.descLat, e.descQ, e.descSess, e.descLag, e.descLate, e.descAudit, e.descUp, e.descMeas} {
		ch <- d
	}
}

// Collect sends the figures as they stand (prometheus.Collector).
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, o := range e.ops {
		ch <- prometheus.MustNewConstMetric(e.descOps, prometheus.CounterValue, float64(o.ok), o.name)
		for c := 1; c < len(o.errs); c++ {
			ch <- prometheus.MustNewConstMetric(e.descErrs, prometheus.CounterValue, float64(o.errs[c]), o.name, metrics.Class(c).String())
		}
		ch <- prometheus.MustNewConstMetric(e.descLate, prometheus.CounterValue, float64(o.late), o.name)
		count, sum, buckets := classic(o.lat)
		ch <- prometheus.MustNewConstHistogram(e.descLat, count, sum, buckets, o.name)
		ch <- prometheus.MustNewConstSummary(e.descQ, count, sum, quantiles(o.lat), o.name)
	}
	count, sum, _ := classic(e.lag)
	ch <- prometheus.MustNewConstSummary(e.descLag, count, sum, quantiles(e.lag))
	ch <- prometheus.MustNewConstMetric(e.descSess, prometheus.GaugeValue, float64(e.sessions))
	ch <- prometheus.MustNewConstMetric(e.descUp, prometheus.CounterValue, float64(e.intervals))
	ch <- prometheus.MustNewConstMetric(e.descMeas, prometheus.GaugeValue, e.measured)
	if e.audit != nil {
		c := e.audit()
		for _, kv := range []struct {
			k string
			v int64
		}{{"invoked", c.Invoked}, {"ok", c.OK}, {"failed", c.Failed}, {"unknown", c.Unknown}} {
			ch <- prometheus.MustNewConstMetric(e.descAudit, prometheus.CounterValue, float64(kv.v), kv.k)
		}
	}
}

// classic turns a histogram of nanoseconds into a classic one of seconds:
// its count, sum and cumulative count per bucket bound.
func classic(h *hdr.Histogram) (uint64, float64, map[float64]uint64) {
	buckets := make(map[float64]uint64, len(Buckets))
	total := h.TotalCount()
	if total == 0 {
		for _, b := range Buckets {
			buckets[b] = 0
		}
		return 0, 0, buckets
	}
	bars := h.Distribution()
	var cum int64
	j := 0
	for _, b := range Buckets {
		bound := int64(b * 1e9)
		for j < len(bars) && bars[j].To <= bound {
			cum += bars[j].Count
			j++
		}
		buckets[b] = uint64(cum)
	}
	return uint64(total), h.Mean() * float64(total) / 1e9, buckets
}

// quantiles are the summary's quantiles in seconds, as run.json reads
// them (ValueAtPercentile).
func quantiles(h *hdr.Histogram) map[float64]float64 {
	q := make(map[float64]float64, len(Quantiles))
	if h.TotalCount() == 0 {
		return q
	}
	for _, p := range Quantiles {
		q[p] = float64(h.ValueAtPercentile(p*100)) / 1e9
	}
	return q
}
