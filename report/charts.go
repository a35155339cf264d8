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
			cur.LagP50, cur.LagP99, cur.LagMax = nanMax(cur.LagP50, r.LagP50), nanMax(cur.LagP99, r.LagP99), nanMax(cur.LagMax, r.LagMax)
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

// tick is a point of a run's timeline: the end of an interval with rows,
// or (Empty) the first or the last of a stretch of intervals without any
// (nothing ran: series.csv has rows only for operations with data).
type tick struct {
	T     float64
	Empty bool
}

// timeline lists the interval ends of every operation's rows, marking
// stretches longer than 1.5 steps with no row at all.
func timeline(rows map[string][]seriesRow, step float64) []tick {
	set := map[float64]bool{}
	for _, rs := range rows {
		for _, r := range rs {
			set[r.T] = true
		}
	}
	ts := make([]float64, 0, len(set))
	for t := range set {
		ts = append(ts, t)
	}
	sort.Float64s(ts)
	out := make([]tick, 0, len(ts))
	for i, t := range ts {
		if i > 0 && t-ts[i-1] > 1.5*step {
			a, b := ts[i-1]+step, t-step
			out = append(out, tick{T: a, Empty: true})
			if b > a+step/2 {
				out = append(out, tick{T: b, Empty: true})
			}
		}
		out = append(out, tick{T: t})
	}
	return out
}

// timelineEnd is the end of the last interval of the timeline: every chart
// over time of a run ends there, whatever its last drawable point.
func timelineEnd(tl []tick) float64 {
	if len(tl) == 0 {
		return 0
	}
	return tl[len(tl)-1].T
}

// align puts an operation's values on the timeline, with missing where
// the operation has no row: 0 for counts and rates (nothing ran), NaN for
// percentiles (nothing to measure) so that the line breaks.
func align(rs []seriesRow, tl []tick, val func(seriesRow) float64, missing float64) (xs, ys []float64) {
	at := make(map[float64]int, len(rs))
	for i, r := range rs {
		at[r.T] = i
	}
	xs, ys = make([]float64, len(tl)), make([]float64, len(tl))
	for i, tk := range tl {
		xs[i], ys[i] = tk.T, missing
		if j, ok := at[tk.T]; ok && !tk.Empty {
			ys[i] = val(rs[j])
		}
	}
	return xs, ys
}

// rate is a per-second figure of a row (the rows too short to chart were
// merged or left out when series.csv was read).
func rate(n int64, r seriesRow) float64 {
	if r.IntervalS <= 0 {
		return math.NaN()
	}
	return float64(n) / r.IntervalS
}

// latencyChart draws one operation's p50 and p99 (and service-time p99 in
// open models) per interval on a log scale with the response-time limits.
func latencyChart(op string, rows []seriesRow, tl []tick, open bool, warmupS float64, note string) chart {
	nan := math.NaN()
	x, p50 := align(rows, tl, func(r seriesRow) float64 { return r.P50 }, nan)
	_, p99 := align(rows, tl, func(r seriesRow) float64 { return r.P99 }, nan)
	spec := lineSpec{Title: op + ": latency over time", XLabel: "time since start", XZero: true, XMax: timelineEnd(tl), YLabel: "latency (log scale)",
		LogY: true, YFmt: fmtMsAxis, XFmt: fmtSeconds, RefY: limits, Bands: warmupBand(warmupS),
		Series: []lineSeries{{Name: "p50", X: x, Y: p50, Color: color(0)}, {Name: "p99", X: x, Y: p99, Color: color(1)}},
		Note:   joinNotes("A gap means the interval had too few operations for the percentile, or none.", note),
		Empty:  "no interval had enough operations to support a percentile"}
	if open {
		_, svc := align(rows, tl, func(r seriesRow) float64 { return r.ServiceP99 }, nan)
		spec.Series = append(spec.Series, lineSeries{Name: "p99 service time", X: x, Y: svc, Color: color(2), Dash: true})
	}
	return spec.render()
}

// perOpChart draws one value per interval for every operation (and their
// total when there are several); an interval without a row is 0.
func perOpChart(title, ylabel string, ops []string, rows map[string][]seriesRow, tl []tick, val func(seriesRow) float64, total bool, warmupS float64, note string) chart {
	spec := lineSpec{Title: title, XLabel: "time since start", XZero: true, XMax: timelineEnd(tl), YLabel: ylabel, XFmt: fmtSeconds, Bands: warmupBand(warmupS), Note: note,
		Empty: "no intervals to draw"}
	sum := make([]float64, len(tl))
	for i, op := range ops {
		x, y := align(rows[op], tl, val, 0)
		for j, v := range y {
			if !math.IsNaN(v) {
				sum[j] += v
			}
		}
		spec.Series = append(spec.Series, lineSeries{Name: op, X: x, Y: y, Color: color(i)})
	}
	if total && len(ops) > 1 {
		x := make([]float64, len(tl))
		for i, tk := range tl {
			x[i] = tk.T
		}
		spec.Series = append(spec.Series, lineSeries{Name: "total", X: x, Y: sum, Color: "#444444", Dash: true})
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
