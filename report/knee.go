package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// kneeSection draws a knee search: each SLO figure against the load with
// its CI and the SLO's limit, the knee shaded between the highest load that
// met the SLO and the lowest that broke it, the throughput achieved against
// the load, and the steps in a table.
func kneeSection(k results.Knee) kneeView {
	kv := kneeView{Label: k.Combination + " " + k.Label, Summary: k.Summary}
	steps := append([]results.KneeStep(nil), k.Steps...)
	sort.Slice(steps, func(a, b int) bool { return steps[a].Load < steps[b].Load })
	x := kneeLoadAxis(k, steps)
	var outcomes []results.SLOOutcome
	for _, s := range steps {
		outcomes = append(outcomes, s.Outcomes...)
	}
	figs := kneeFigures(steps)
	for i, fg := range figs {
		kv.Charts = append(kv.Charts, kneeFigureChart(kv.Label, i, fg, steps, outcomes, x))
	}
	kv.Charts = append(kv.Charts, kneeThroughputChart(kv.Label, k.On, steps, x))
	kv.Steps = kneeStepTable(steps, figs)
	return kv
}

// kneeAxis is the load axis every chart of a knee search shares.
type kneeAxis struct {
	name  string    // what the load is
	logX  bool      // the loads span a factor of 8 or more
	ticks []float64 // the loads, or nil when there are more than 10
	bands []band    // the knee, when the search found one
}

// kneeLoadAxis lays out the load axis of a knee search from its steps,
// sorted by load.
func kneeLoadAxis(k results.Knee, steps []results.KneeStep) kneeAxis {
	x := kneeAxis{name: map[string]string{"users": "users", "rate": "offered rate (ops/s)"}[k.On]}
	if x.name == "" {
		x.name = k.On
	}
	x.logX = len(steps) > 1 && steps[len(steps)-1].Load/math.Max(steps[0].Load, 1e-9) >= 8
	for _, st := range steps {
		if n := len(x.ticks); n == 0 || x.ticks[n-1] != st.Load {
			x.ticks = append(x.ticks, st.Load)
		}
	}
	if len(x.ticks) > 10 {
		x.ticks = nil
	}
	if k.Load != nil && k.Broke != nil {
		x.bands = []band{{*k.Load, *k.Broke, "knee"}}
	}
	return x
}

// kneeFigures lists the SLO figures the steps measured, in the order they
// first appear.
func kneeFigures(steps []results.KneeStep) []opMetric {
	var figs []opMetric
	seen := map[opMetric]bool{}
	for _, s := range steps {
		for _, f := range s.Figures {
			if key := (opMetric{f.Op, f.Metric}); !seen[key] {
				seen[key] = true
				figs = append(figs, key)
			}
		}
	}
	return figs
}

// kneeFigureSeries is the i-th SLO figure of each step against the load,
// times scale, with its lowest and highest value (a step with no samples
// for it leaves a gap).
func kneeFigureSeries(i int, fg opMetric, steps []results.KneeStep, scale float64) (ser lineSeries, lo, hi float64) {
	ser = lineSeries{Name: fg.op + " " + fg.metric, Color: color(i), Markers: true}
	lo, hi = math.Inf(1), 0.0
	for _, s := range steps {
		for _, f := range s.Figures {
			if f.Op != fg.op || f.Metric != fg.metric {
				continue
			}
			y := math.NaN()
			if f.N > 0 {
				y = f.Mean * scale
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
			ser.X, ser.Y = append(ser.X, s.Load), append(ser.Y, y)
			l, h := ciWhisker(f.Stat, scale)
			ser.Lo, ser.Hi = append(ser.Lo, l), append(ser.Hi, h)
		}
	}
	return ser, lo, hi
}

// kneeFigureChart draws the i-th SLO figure against the load with its CI
// and the SLO's limit; a latency spanning over 20 times gets a log axis.
func kneeFigureChart(label string, i int, fg opMetric, steps []results.KneeStep, outcomes []results.SLOOutcome, x kneeAxis) chart {
	scale, yf := 1.0, fmtMsAxis
	if fg.metric == "error_rate" {
		scale, yf = 100, func(v float64) string { return trimNum(v, 2) + "%" }
	}
	ser, lo, hi := kneeFigureSeries(i, fg, steps, scale)
	spec := lineSpec{Title: fmt.Sprintf("%s: %s against %s", label, ser.Name, x.name), XLabel: x.name, YFmt: yf,
		LogX: x.logX, XTicks: x.ticks, XFmt: fmtNum, Bands: x.bands, Series: []lineSeries{ser},
		Note: "Mean over each step's repeats with its confidence interval; a missing point had too few samples for the figure."}
	if fg.metric != "error_rate" && hi > 0 && hi/math.Max(lo, 1e-9) > 20 {
		spec.LogY = true
	}
	if lim, name, ok := sloLimit(outcomes, fg.op, fg.metric); ok {
		spec.RefY = []refLine{{V: lim * scale, Label: "SLO " + name}}
	}
	return spec.render()
}

// kneeThroughputChart draws the throughput each step achieved against its
// load, with the offered rate when the load is a rate.
func kneeThroughputChart(label, on string, steps []results.KneeStep, x kneeAxis) chart {
	tp := lineSeries{Name: "achieved throughput", Color: color(2), Markers: true}
	for _, s := range steps {
		tp.X, tp.Y = append(tp.X, s.Load), append(tp.Y, s.Throughput.Mean)
		l, h := ciWhisker(s.Throughput, 1)
		tp.Lo, tp.Hi = append(tp.Lo, l), append(tp.Hi, h)
	}
	spec := lineSpec{Title: label + ": throughput against " + x.name, XLabel: x.name, YLabel: "ops/s", LogX: x.logX, XTicks: x.ticks, XFmt: fmtNum, Bands: x.bands,
		Series: []lineSeries{tp}}
	if on == "rate" {
		spec.Series = append(spec.Series, lineSeries{Name: "offered rate", Color: "#444444", Dash: true, X: tp.X, Y: tp.X})
	}
	return spec.render()
}

// kneeStepTable lists the steps by load: the SLO's verdict, the throughput
// and each SLO figure with their CIs, and the runs.
func kneeStepTable(steps []results.KneeStep, figs []opMetric) figTable {
	t := figTable{Cols: []string{"load", "step", "SLO", "throughput ops/s"}, Wrap: false}
	for _, fg := range figs {
		t.Cols = append(t.Cols, fg.op+" "+fg.metric)
	}
	t.Cols = append(t.Cols, "runs")
	for _, s := range steps {
		pass := "FAIL"
		if s.Pass {
			pass = "pass"
		}
		row := []string{fmtNum(s.Load), strconv.Itoa(s.Order), pass, fmtNum(s.Throughput.Mean) + " " + statCI(s.Throughput, fmtNum)}
		for _, fg := range figs {
			row = append(row, kneeStepCell(s, fg))
		}
		var dirs []string
		for _, run := range s.Runs {
			dirs = append(dirs, run.Dir)
		}
		row = append(row, strings.Join(dirs, " "))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// kneeStepCell is a step's figure with its CI, "-" when it has no samples.
func kneeStepCell(s results.KneeStep, fg opMetric) string {
	cell := "-"
	for _, f := range s.Figures {
		if f.Op == fg.op && f.Metric == fg.metric && f.N > 0 {
			uf := unitFmt("ms")
			if fg.metric == "error_rate" {
				uf = fmtPct
			}
			cell = uf(f.Mean) + " " + statCI(f.Stat, uf)
		}
	}
	return cell
}
