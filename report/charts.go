package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The charts of a run, built from series.csv (over time) and from the
// interval log's merged histograms (percentile spectra).

// maxPoints bounds the points per line: longer runs are drawn from buckets
// of several intervals.
const maxPoints = 720

// limits are the classic response-time limits (0.1 s: feels instant; 1 s:
// keeps the flow of thought; 10 s: keeps attention), drawn on latency
// charts in milliseconds.
var limits = []refLine{{100, "0.1 s"}, {1000, "1 s"}, {10000, "10 s"}}

// bucketSeries aggregates each operation's rows into buckets of width
// seconds (1 for none), the same buckets for every operation: counts and
// errors add up, p50 is averaged, p99 and max take the bucket's highest
// interval, sessions the highest count.
func bucketSeries(s *series, width float64) map[string][]seriesRow {
	if width <= 1 {
		return s.Rows
	}
	out := map[string][]seriesRow{}
	for op, rows := range s.Rows {
		var cur *seriesRow
		var key float64
		var p50n int
		for _, r := range rows {
			k := math.Floor((r.T - 1e-6) / width)
			if cur == nil || k != key {
				if cur != nil {
					out[op] = append(out[op], finishBucket(*cur, p50n))
				}
				key, p50n = k, 0
				c := r
				c.P50 = 0
				cur = &c
				if !math.IsNaN(r.P50) {
					cur.P50, p50n = r.P50, 1
				}
				continue
			}
			cur.T = r.T
			cur.IntervalS += r.IntervalS
			cur.Count += r.Count
			cur.Errors += r.Errors
			cur.Late += r.Late
			cur.P99 = nanMax(cur.P99, r.P99)
			cur.Max = nanMax(cur.Max, r.Max)
			cur.ServiceP99 = nanMax(cur.ServiceP99, r.ServiceP99)
			cur.Sessions = max(cur.Sessions, r.Sessions)
			cur.Warmup = cur.Warmup && r.Warmup
			if !math.IsNaN(r.P50) {
				cur.P50 += r.P50
				p50n++
			}
		}
		if cur != nil {
			out[op] = append(out[op], finishBucket(*cur, p50n))
		}
	}
	return out
}

func finishBucket(r seriesRow, p50n int) seriesRow {
	if p50n > 0 {
		r.P50 /= float64(p50n)
	} else {
		r.P50 = math.NaN()
	}
	if r.IntervalS > 0 {
		r.Tput = float64(r.Count) / r.IntervalS
	}
	return r
}

func nanMax(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return math.Max(a, b)
}

// bucketWidth returns the bucket width in seconds that keeps a line under
// maxPoints points.
func bucketWidth(s *series) float64 {
	end := 0.0
	for _, rows := range s.Rows {
		if n := len(rows); n > 0 {
			end = math.Max(end, rows[n-1].T)
		}
	}
	if end <= maxPoints {
		return 1
	}
	return math.Ceil(end / maxPoints)
}

func aggregationNote(width float64) string {
	if width <= 1 {
		return ""
	}
	return fmt.Sprintf("Each point covers %s of intervals: counts are summed, p50 averaged, p99 the highest interval's.", fmtSeconds(width))
}

func warmupBand(warmupS float64) []band {
	if warmupS <= 0 {
		return nil
	}
	return []band{{0, warmupS, "warm-up"}}
}

// latencyChart draws one operation's p50 and p99 (and service-time p99 in
// open models) per interval on a log scale with the response-time limits.
func latencyChart(op string, rows []seriesRow, open bool, warmupS float64, note string) chart {
	x, p50, p99, svc := make([]float64, len(rows)), make([]float64, len(rows)), make([]float64, len(rows)), make([]float64, len(rows))
	for i, r := range rows {
		x[i], p50[i], p99[i], svc[i] = r.T, r.P50, r.P99, r.ServiceP99
	}
	spec := lineSpec{Title: op + ": latency over time", XLabel: "time since start", XZero: true, YLabel: "latency (log scale)",
		LogY: true, YFmt: fmtMsAxis, XFmt: fmtSeconds, RefY: limits, Bands: warmupBand(warmupS),
		Series: []lineSeries{{Name: "p50", X: x, Y: p50, Color: color(0)}, {Name: "p99", X: x, Y: p99, Color: color(1)}},
		Note:   joinNotes("A gap means the interval had too few operations for the percentile.", note),
		Empty:  "no interval had enough operations to support a percentile"}
	if open {
		spec.Series = append(spec.Series, lineSeries{Name: "p99 service time", X: x, Y: svc, Color: color(2), Dash: true})
	}
	return spec.render()
}

// perOpChart draws one value per interval for every operation (and their
// total when there are several).
func perOpChart(title, ylabel string, ops []string, rows map[string][]seriesRow, val func(seriesRow) float64, total bool, warmupS float64, note string) chart {
	spec := lineSpec{Title: title, XLabel: "time since start", XZero: true, YLabel: ylabel, XFmt: fmtSeconds, Bands: warmupBand(warmupS), Note: note,
		Empty: "no intervals to draw"}
	sum := map[float64]float64{}
	for i, op := range ops {
		rs := rows[op]
		x, y := make([]float64, len(rs)), make([]float64, len(rs))
		for j, r := range rs {
			x[j], y[j] = r.T, val(r)
			sum[r.T] += val(r)
		}
		spec.Series = append(spec.Series, lineSeries{Name: op, X: x, Y: y, Color: color(i)})
	}
	if total && len(ops) > 1 {
		ts := make([]float64, 0, len(sum))
		for t := range sum {
			ts = append(ts, t)
		}
		sort.Float64s(ts)
		y := make([]float64, len(ts))
		for i, t := range ts {
			y[i] = sum[t]
		}
		spec.Series = append(spec.Series, lineSeries{Name: "total", X: ts, Y: y, Color: "#444444", Dash: true})
	}
	return spec.render()
}

// spectrumLine is one histogram drawn in a percentile spectrum.
type spectrumLine struct {
	Name  string
	Hist  *hdr.Histogram
	Color string
	Dash  bool
}

// nines are the spectrum's x ticks: x = log10(1/(1-p)).
var nines = []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"}

// spectrumChart draws latency against percentile with the tail stretched
// (x = log10(1/(1-p)), as HdrHistogram plots do) and latency on a log
// scale. Each line stops at the highest percentile its count supports.
func spectrumChart(title string, lines []spectrumLine, note string) chart {
	spec := lineSpec{Title: title, XLabel: "percentile", YLabel: "latency (log scale)", LogY: true, YFmt: fmtMsAxis,
		RefY: limits, Note: note, Empty: "no operations were measured"}
	xmax := 1.0
	for _, l := range lines {
		if l.Hist == nil || l.Hist.TotalCount() == 0 {
			continue
		}
		top := math.Min(6, math.Log10(float64(l.Hist.TotalCount())))
		xmax = math.Max(xmax, math.Ceil(top))
		var ps []float64
		for x := 0.0; x < top; x += 0.04 {
			ps = append(ps, 100*(1-math.Pow(10, -x)))
		}
		ps = append(ps, 100*(1-math.Pow(10, -top)))
		vals := l.Hist.ValueAtPercentilesSlice(ps)
		xs, ys := make([]float64, 0, len(ps)+1), make([]float64, 0, len(ps)+1)
		for i, p := range ps {
			xs = append(xs, -math.Log10(1-p/100))
			ys = append(ys, float64(vals[i])/1e6)
		}
		spec.Series = append(spec.Series, lineSeries{Name: l.Name, X: xs, Y: ys, Color: l.Color, Dash: l.Dash})
	}
	for x := 0.0; x <= math.Min(xmax, 6); x++ {
		spec.XTicks = append(spec.XTicks, x)
	}
	spec.XFmt = func(x float64) string {
		if i := int(math.Round(x)); i >= 0 && i < len(nines) && math.Abs(x-float64(i)) < 1e-9 {
			return nines[i]
		}
		return fmtPct(1 - math.Pow(10, -x))
	}
	return spec.render()
}

func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}
