package report

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// expView is everything the experiment page shows.
type expView struct {
	Meta     pageMeta
	R        *results.Experiment
	Facts    []fact
	Factors  figTable
	Combos   []comboView
	Clusters *figTable
	Tables   []opTable
	Bars     []chart
	Scaling  []chart
	Spectra  []chart
	Knees    []kneeView
	Notes    []string
}

type comboView struct {
	ID, Label, Engine, Settings, Cluster, Repeats string
	Baseline                                      bool
	SLO, SLOClass                                 string
	Runs                                          []runLink
}

// runLink points at a run's own report, relative to the experiment page.
type runLink struct {
	Href, Text, Class, Tip string
}

type opTable struct {
	Op   string
	Rows []cmpRowView
}

type cmpRowView struct {
	Metric, Combo, N, Mean, CI, Delta, P, Verdict, Class string
	First                                                bool // first row of a metric
}

type kneeView struct {
	Label, Summary string
	Charts         []chart
	Steps          figTable
}

// Verdict colors of the bar charts.
const (
	colBaseline = "#7f7f7f"
	colBetter   = "#009e73"
	colWorse    = "#d55e00"
	colSame     = "#0072b2"
)

func verdictClass(v string) string {
	switch v {
	case "better":
		return "better"
	case "worse":
		return "worse"
	case "baseline":
		return ""
	}
	return "same"
}

func verdictColor(v string) string {
	switch v {
	case "better":
		return colBetter
	case "worse":
		return colWorse
	case "baseline":
		return colBaseline
	}
	return colSame
}

// unitFmt formats a value of a comparison unit.
func unitFmt(unit string) func(float64) string {
	switch unit {
	case "ms":
		return func(v float64) string { return ms(&v) }
	case "fraction":
		return fmtPct
	}
	return fmtNum
}

func metricTitle(metric, unit string) string {
	name := map[string]string{"throughput": "throughput", "mean": "mean latency", "p50": "p50 latency", "p90": "p90 latency",
		"p95": "p95 latency", "p99": "p99 latency", "p999": "p99.9 latency", "max": "max latency", "error_rate": "error rate"}[metric]
	if name == "" {
		name = metric
	}
	switch unit {
	case "ms":
		return name + " (ms)"
	case "ops/s":
		return name + " (ops/s)"
	}
	return name
}

func buildExperimentView(r *results.Experiment, dir string) *expView {
	v := &expView{R: r, Facts: expFacts(r)}
	v.Meta = newMeta("scalelab experiment: " + r.Name + " (" + r.Status + ")")
	if r.Schema == 0 {
		v.Notes = append(v.Notes, "experiment.json carries no schema version; it may be from an older scalelab.")
	}
	v.Factors = figTable{Title: "Factors", Cols: []string{"factor", "levels"}, Wrap: true}
	for _, f := range r.Factors {
		v.Factors.Rows = append(v.Factors.Rows, []string{f.Name, strings.Join(f.Levels, ", ")})
	}
	for _, c := range r.Combinations {
		v.Combos = append(v.Combos, comboRow(c, r))
	}
	if len(r.Clusters) > 0 {
		t := &figTable{Title: "Local clusters", Cols: []string{"cluster", "engine", "nodes", "combinations", "up", "stopped", "error"}, Wrap: true}
		for _, c := range r.Clusters {
			t.Rows = append(t.Rows, []string{c.Name, c.Engine, strconv.Itoa(c.Nodes), strings.Join(c.Combinations, ", "), fmtDuration(c.UpSeconds), fmt.Sprint(c.Stopped), c.Error})
		}
		v.Clusters = t
	}
	if len(r.Comparison) > 0 {
		v.Tables = comparisonTables(r)
		v.Bars = comparisonBars(r)
		v.Scaling = scalingCurves(r)
	}
	v.Spectra = comboSpectra(r, dir)
	for _, k := range r.Knees {
		v.Knees = append(v.Knees, kneeSection(k))
	}
	return v
}

func comboRow(c results.CombinationResult, r *results.Experiment) comboView {
	cv := comboView{ID: c.ID, Label: c.Label, Engine: c.Engine, Settings: strings.Join(c.Settings, " "), Baseline: c.Baseline}
	if cl := c.Cluster; cl != nil {
		cv.Cluster = fmt.Sprintf("%s, %d node(s)", cl.Engine, cl.Nodes)
		if cl.Replicas > 0 {
			cv.Cluster += fmt.Sprintf(", %d replica(s)", cl.Replicas)
		}
		if cl.Heap != "" {
			cv.Cluster += ", heap " + cl.Heap
		}
		if len(cl.Roles) > 0 {
			cv.Cluster += ", roles " + strings.Join(cl.Roles, "/")
		}
	}
	measured := 0
	for _, run := range c.Runs {
		if run.Measured {
			measured++
		}
		cv.Runs = append(cv.Runs, runLinkOf(run))
	}
	cv.Repeats = fmt.Sprintf("%d of %d", measured, len(c.Runs))
	if c.Converged != nil {
		if *c.Converged {
			cv.Repeats += ", CI converged"
		} else {
			cv.Repeats += ", CI did not converge"
		}
		if c.CIHalfPct != nil {
			cv.Repeats += fmt.Sprintf(" (±%s%%)", fmtNum(*c.CIHalfPct))
		}
	}
	if c.SLOPass != nil {
		var fails []string
		for _, o := range c.SLO {
			if !o.Pass {
				fails = append(fails, o.Detail)
			}
		}
		if *c.SLOPass {
			cv.SLO, cv.SLOClass = "pass", "better"
		} else {
			cv.SLO, cv.SLOClass = "FAIL: "+strings.Join(fails, "; "), "worse"
		}
	}
	return cv
}

func runLinkOf(run results.RunRef) runLink {
	l := runLink{Href: filepath.ToSlash(filepath.Join(run.Dir, results.ReportFile)), Text: fmt.Sprintf("r%d", run.Repeat),
		Tip: fmt.Sprintf("%s: %s, %s ops/s, seed %d", run.Dir, run.Status, fmtNum(run.ThroughputPerS), run.Seed)}
	if run.Load > 0 {
		l.Text = fmt.Sprintf("%s r%d", fmtNum(run.Load), run.Repeat)
	}
	if !run.Measured || run.Status != results.StatusOK {
		l.Class = "worse"
		if run.Error != "" {
			l.Tip += ": " + run.Error
		}
	}
	return l
}

func statCI(s results.Stat, f func(float64) string) string {
	if s.CILow == nil || s.CIHigh == nil {
		return "-"
	}
	return "[" + f(*s.CILow) + ", " + f(*s.CIHigh) + "]"
}

// ciWhisker returns a stat's CI times scale, its low end at least 0, or
// NaNs when it has none.
func ciWhisker(s results.Stat, scale float64) (lo, hi float64) {
	if s.CILow == nil || s.CIHigh == nil {
		return math.NaN(), math.NaN()
	}
	return math.Max(*s.CILow*scale, 0), *s.CIHigh * scale
}

func comparisonTables(r *results.Experiment) []opTable {
	var out []opTable
	index := map[string]int{}
	for _, row := range r.Comparison {
		i, ok := index[row.Op]
		if !ok {
			i = len(out)
			index[row.Op] = i
			out = append(out, opTable{Op: row.Op})
		}
		f := unitFmt(row.Unit)
		rv := cmpRowView{Metric: metricTitle(row.Metric, row.Unit), Combo: row.Combination + " " + row.Label, N: strconv.Itoa(row.N),
			Mean: f(row.Mean), CI: statCI(row.Stat, f), Verdict: row.Verdict, Class: verdictClass(row.Verdict), Delta: "-", P: "-"}
		if row.DeltaPct != nil {
			rv.Delta = fmt.Sprintf("%+.1f%%", *row.DeltaPct)
		} else if row.Delta != nil {
			rv.Delta = f(*row.Delta)
		}
		if row.PValue != nil {
			rv.P = fmtP(*row.PValue)
		}
		out[i].Rows = append(out[i].Rows, rv)
	}
	for i := range out {
		rows := out[i].Rows
		sort.SliceStable(rows, func(a, b int) bool { return metricRank(rows[a].Metric) < metricRank(rows[b].Metric) })
		for j := len(rows) - 1; j >= 0; j-- {
			if j > 0 && rows[j].Metric == rows[j-1].Metric {
				rows[j].Metric = ""
			} else {
				rows[j].First = true
			}
		}
	}
	return out
}

func metricRank(title string) int {
	for i, p := range []string{"throughput", "error rate", "mean", "p50", "p90", "p95", "p99 ", "p99.9", "max"} {
		if strings.HasPrefix(title, p) {
			return i
		}
	}
	return 99
}

func fmtP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// shortLabel names a combination in a chart: its ID and levels, with
// factor names cut to their last part (memory.latency_jitter: latency_jitter).
func shortLabel(r *results.Experiment, id string) string {
	for _, c := range r.Combinations {
		if c.ID != id {
			continue
		}
		parts := []string{id}
		for _, l := range c.Levels {
			name := l.Factor
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			parts = append(parts, name+"="+l.Level)
		}
		return strings.Join(parts, " ")
	}
	return id
}

func confPct(c float64) string { return trimNum(100*nz(c, 0.95), 1) + "%" }

// opMetric names one metric of one operation.
type opMetric struct{ op, metric string }

// rowsOf returns the comparison rows of one operation and metric, in
// combination order.
func rowsOf(r *results.Experiment, op, metric string) []results.Row {
	var out []results.Row
	for _, row := range r.Comparison {
		if row.Op == op && row.Metric == metric {
			out = append(out, row)
		}
	}
	return out
}

// sloLimit returns the SLO limit on an operation's metric, if any.
func sloLimit(outcomes []results.SLOOutcome, op, metric string) (float64, string, bool) {
	for _, o := range outcomes {
		if o.Metric == metric && (o.Op == op || o.Op == "") {
			return o.Limit, o.SLO, true
		}
	}
	return 0, "", false
}

func allOutcomes(r *results.Experiment) []results.SLOOutcome {
	var out []results.SLOOutcome
	for _, c := range r.Combinations {
		out = append(out, c.SLO...)
	}
	for _, k := range r.Knees {
		for _, s := range k.Steps {
			out = append(out, s.Outcomes...)
		}
	}
	return out
}

// barMetrics are the bar charts drawn per operation.
var barMetrics = []string{"throughput", "error_rate", "p95", "p99"}

// comparisonBars draws, per operation and metric, one bar per combination:
// the mean over repeats with its CI as a whisker, colored by the verdict
// against the baseline, with the SLO's limit where one applies.
func comparisonBars(r *results.Experiment) []chart {
	outcomes := allOutcomes(r)
	ops := comparisonOps(r)
	legend := []legendItem{{colBaseline, false, "baseline"}, {colBetter, false, "better"}, {colWorse, false, "worse"}, {colSame, false, "no significant difference"}}
	var out []chart
	for _, op := range ops {
		for _, m := range barMetrics {
			rows := rowsOf(r, op, m)
			if len(rows) == 0 {
				continue
			}
			scale, f := 1.0, unitFmt(rows[0].Unit)
			if rows[0].Unit == "fraction" {
				scale, f = 100, func(v float64) string { return trimNum(v, 2) + "%" }
			}
			spec := barSpec{Title: op + ": " + metricTitle(m, rows[0].Unit), Fmt: f, Legend: legend,
				Note: fmt.Sprintf("Mean over repeats; whiskers: %s confidence interval.", confPct(r.Confidence))}
			if rows[0].Unit == "fraction" {
				spec.TickFmt = f
			}
			for _, row := range rows {
				b := barItem{Label: shortLabel(r, row.Combination), V: row.Mean * scale, Lo: math.NaN(), Hi: math.NaN(), Color: verdictColor(row.Verdict)}
				if row.CILow != nil && row.CIHigh != nil {
					b.Lo, b.Hi = *row.CILow*scale, *row.CIHigh*scale
				}
				b.Tip = fmt.Sprintf("%s %s: %s, %s", row.Combination, row.Label, f(b.V), row.Verdict)
				spec.Bars = append(spec.Bars, b)
			}
			if lim, name, ok := sloLimit(outcomes, op, m); ok {
				spec.RefX = append(spec.RefX, refLine{V: lim * scale, Label: "SLO " + name})
			}
			out = append(out, spec.render())
		}
	}
	return out
}

// numericLevels returns a factor's levels as numbers ("8", "1000/s",
// "2") when all of them are.
func numericLevels(f results.FactorInfo) (map[string]float64, bool) {
	out := map[string]float64{}
	for _, l := range f.Levels {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(l), "/s"), 64)
		if err != nil {
			return nil, false
		}
		out[l] = v
	}
	return out, len(out) > 1
}

// scalingCurves draws, for every numeric factor (users, rate, nodes, ...),
// a metric against the factor's level: one line per combination of the
// other factors' levels, with CI whiskers.
func scalingCurves(r *results.Experiment) []chart {
	outcomes := allOutcomes(r)
	wants := scalingMetrics(r)
	var out []chart
	for _, f := range r.Factors {
		lv, ok := numericLevels(f)
		if !ok {
			continue
		}
		g := groupByOthers(r, f.Name, lv)
		for _, w := range wants {
			if c, ok := scalingChart(r, f.Name, lv, g, w, outcomes); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// comparisonOps lists the operations of the comparison rows in the order
// they first appear.
func comparisonOps(r *results.Experiment) []string {
	var ops []string
	seen := map[string]bool{}
	for _, row := range r.Comparison {
		if !seen[row.Op] {
			seen[row.Op] = true
			ops = append(ops, row.Op)
		}
	}
	return ops
}

// scalingMetrics are the metrics a scaling curve is drawn for: the total
// throughput and the p99 of the first four operations.
func scalingMetrics(r *results.Experiment) []opMetric {
	wants := []opMetric{{"(all)", "throughput"}}
	n := 0
	for _, op := range comparisonOps(r) {
		if op != "(all)" && n < 4 {
			wants = append(wants, opMetric{op, "p99"})
			n++
		}
	}
	return wants
}

// levelPoint is a combination at a numeric factor level.
type levelPoint struct {
	x     float64
	combo string
}

// levelGroups are the combinations with a numeric factor's level, grouped
// by the other factors' levels ("" with no other factor).
type levelGroups struct {
	points map[string][]levelPoint
	order  []string // keys in the order of the combinations
}

// groupByOthers groups the combinations that have a level of factor, by
// their levels of the other factors.
func groupByOthers(r *results.Experiment, factor string, lv map[string]float64) levelGroups {
	g := levelGroups{points: map[string][]levelPoint{}}
	for _, c := range r.Combinations {
		var x float64
		var rest []string
		found := false
		for _, l := range c.Levels {
			if l.Factor == factor {
				x, found = lv[l.Level], true
			} else {
				rest = append(rest, l.Factor+"="+l.Level)
			}
		}
		if !found {
			continue
		}
		key := strings.Join(rest, " ")
		if _, ok := g.points[key]; !ok {
			g.order = append(g.order, key)
		}
		g.points[key] = append(g.points[key], levelPoint{x, c.ID})
	}
	return g
}

// scalingChart draws an operation's metric against a numeric factor's
// level, a line per group; false when no combination has the metric.
func scalingChart(r *results.Experiment, factor string, lv map[string]float64, g levelGroups, w opMetric, outcomes []results.SLOOutcome) (chart, bool) {
	byCombo := map[string]results.Row{}
	unit := ""
	for _, row := range rowsOf(r, w.op, w.metric) {
		byCombo[row.Combination] = row
		unit = row.Unit
	}
	if len(byCombo) == 0 {
		return chart{}, false
	}
	spec := lineSpec{Title: fmt.Sprintf("%s: %s against %s", w.op, metricTitle(w.metric, unit), factor), XLabel: factor, YLabel: unit,
		Note: fmt.Sprintf("Mean over repeats with its %s confidence interval.", confPct(r.Confidence))}
	if unit == "fraction" {
		spec.YFmt = fmtPct
	}
	ticks := slices.Sorted(maps.Values(lv))
	if len(ticks) <= 12 {
		spec.XTicks = ticks
		spec.XFmt = fmtNum
	}
	if ticks[0] > 0 && ticks[len(ticks)-1]/ticks[0] >= 8 {
		spec.LogX = true
	}
	for gi, key := range g.order {
		spec.Series = append(spec.Series, scalingSeries(gi, key, factor, g.points[key], byCombo))
	}
	if lim, name, ok := sloLimit(outcomes, w.op, w.metric); ok {
		spec.RefY = append(spec.RefY, refLine{V: lim, Label: "SLO " + name})
	}
	return spec.render(), true
}

// scalingSeries is the line of the gi-th group: each of its combinations'
// mean by level with its CI, named after the group (or the factor when
// there is no other factor).
func scalingSeries(gi int, key, factor string, pts []levelPoint, byCombo map[string]results.Row) lineSeries {
	sort.Slice(pts, func(a, b int) bool { return pts[a].x < pts[b].x })
	ser := lineSeries{Name: key, Color: color(gi), Markers: true}
	if ser.Name == "" {
		ser.Name = factor
	}
	for _, p := range pts {
		row, ok := byCombo[p.combo]
		if !ok {
			continue
		}
		ser.X = append(ser.X, p.x)
		ser.Y = append(ser.Y, row.Mean)
		lo, hi := ciWhisker(row.Stat, 1) // no metric is negative
		ser.Lo, ser.Hi = append(ser.Lo, lo), append(ser.Hi, hi)
	}
	return ser
}

// maxSpectra bounds the combinations overlaid in one spectrum chart.
const maxSpectra = 10

// comboSpectra overlays, per operation, the percentile spectrum of each
// combination, its measured repeats' interval logs merged.
func comboSpectra(r *results.Experiment, dir string) []chart {
	if len(r.Combinations) == 0 {
		return nil
	}
	type merged struct {
		label string
		hists map[string]*hdr.Histogram
	}
	var combos []merged
	opSet := map[string]bool{}
	for i, c := range r.Combinations {
		if i == maxSpectra {
			break
		}
		m := merged{label: c.ID + " " + c.Label, hists: map[string]*hdr.Histogram{}}
		for _, run := range c.Runs {
			if !run.Measured {
				continue
			}
			rd := filepath.Join(dir, run.Dir)
			doc, err := results.Read(rd)
			if err != nil {
				continue
			}
			log, err := metrics.ReadIntervalLog(filepath.Join(rd, results.HlogFile), doc.Load.WarmupS)
			if err != nil {
				continue
			}
			for tag, h := range log.Hists {
				if strings.HasSuffix(tag, ".error") || strings.HasSuffix(tag, ".service") {
					continue
				}
				opSet[tag] = true
				if m.hists[tag] == nil {
					m.hists[tag] = h
				} else {
					m.hists[tag].Merge(h)
				}
			}
		}
		combos = append(combos, m)
	}
	ops := slices.Sorted(maps.Keys(opSet))
	var out []chart
	for _, op := range ops {
		var lines []spectrumLine
		for i, m := range combos {
			if h := m.hists[op]; h != nil {
				lines = append(lines, spectrumLine{Name: m.label, Hist: h, Color: color(i)})
			}
		}
		note := "Each combination's measured repeats merged (warm-up excluded)."
		if len(r.Combinations) > maxSpectra {
			note += fmt.Sprintf(" The first %d of %d combinations.", maxSpectra, len(r.Combinations))
		}
		out = append(out, spectrumChart(op+": latency by percentile", lines, note))
	}
	return out
}

var experimentTmpl = newTemplate("experiment", `{{define "experiment"}}{{template "head" .Meta}}
<h1>{{.R.Name}} <span class="status {{.R.Status}}">{{.R.Status}}</span></h1>
{{with .R.Description}}<p>{{.}}</p>{{end}}
{{with .R.Error}}<div class="alert"><b>Error:</b> {{.}}</div>{{end}}
{{range .R.Failures}}<div class="alert"><b>Failed:</b> {{.}}</div>{{end}}
{{range .Notes}}<div class="alert warn">{{.}}</div>{{end}}
{{template "facts" .Facts}}
{{range .R.Notes}}<p class="mut small">Note: {{.}}</p>{{end}}
{{if .Factors.Rows}}{{template "table" .Factors}}{{end}}
<h2>Combinations</h2>
<div class="scroll"><table><thead><tr><th>id</th><th class="l">levels</th><th class="l">engine</th><th class="l">cluster</th><th>repeats</th><th class="l">SLO</th><th class="l">runs</th></tr></thead><tbody>
{{range .Combos}}<tr{{if .Baseline}} class="changed"{{end}}><td>{{.ID}}{{if .Baseline}} (baseline){{end}}</td><td class="wrap">{{.Label}}</td><td class="l">{{.Engine}}</td><td class="wrap">{{.Cluster}}</td><td>{{.Repeats}}</td><td class="wrap {{.SLOClass}}">{{.SLO}}</td><td class="wrap">{{range .Runs}}<a href="{{.Href}}" title="{{.Tip}}"{{with .Class}} class="{{.}}"{{end}}>{{.Text}}</a> {{end}}</td></tr>
{{end}}</tbody></table></div>
<p class="mut small">Each run's own report is linked from its repeat (r1, r2, ...). Settings per combination:</p>
<div class="scroll"><table><tbody>{{range .Combos}}<tr><td>{{.ID}}</td><td class="wrap mono">{{.Settings}}</td></tr>{{end}}</tbody></table></div>
{{with .Clusters}}{{template "table" .}}{{end}}
{{if .Bars}}<h2>Comparison with the baseline</h2>
<div class="grid2">{{range .Bars}}{{template "chart" .}}{{end}}</div>{{end}}
{{if .Scaling}}<h2>Scaling curves</h2>
<div class="grid2">{{range .Scaling}}{{template "chart" .}}{{end}}</div>{{end}}
{{range .Knees}}<h2>Knee: {{.Label}}</h2>
<p><b>{{.Summary}}</b></p>
<div class="grid2">{{range .Charts}}{{template "chart" .}}{{end}}</div>
{{template "table" .Steps}}{{end}}
{{if .Spectra}}<h2>Latency percentile spectra</h2>
<div class="grid2">{{range .Spectra}}{{template "chart" .}}{{end}}</div>{{end}}
{{if .Tables}}<h2>Comparison tables</h2>
<p class="mut">Mean over the measured repeats with its {{printf "%.0f" (pct .R.Confidence)}}% confidence interval; the change against the combination's baseline; Welch's two-sided p-value; the verdict.</p>
{{range .Tables}}<h3>{{.Op}}</h3>
<div class="scroll"><table><thead><tr><th class="l">metric</th><th class="l">combination</th><th>n</th><th>mean</th><th>CI</th><th>vs baseline</th><th>p</th><th class="l">verdict</th></tr></thead><tbody>
{{range .Rows}}<tr{{if .First}} class="grp"{{end}}><td class="l">{{.Metric}}</td><td class="l">{{.Combo}}</td><td>{{.N}}</td><td>{{.Mean}}</td><td>{{.CI}}</td><td class="{{.Class}}">{{.Delta}}</td><td>{{.P}}</td><td class="l {{.Class}}">{{.Verdict}}</td></tr>
{{end}}</tbody></table></div>{{end}}{{end}}
{{template "foot" .Meta}}{{end}}`)
