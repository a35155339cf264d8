package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/termtable"
)

// A comparison puts runs side by side, the first as the baseline and the
// others as contenders (as Rally's compare does): their facts, the
// settings in which they differ, a baseline/contender table with the
// change of every figure, and percentile spectra and throughput overlaid.

// compared is one run of a comparison.
type compared struct {
	Label string
	Dir   string
	Run   *results.Run
	Log   *metrics.IntervalLog
	Ser   *series
}

// loadCompared reads the runs; labels are the directory names (the whole
// path where names repeat).
func loadCompared(dirs []string) ([]*compared, []string, error) {
	var out []*compared
	var notes []string
	names := map[string]int{}
	for _, d := range dirs {
		names[filepath.Base(filepath.Clean(d))]++
	}
	for _, d := range dirs {
		r, err := results.Read(d)
		if err != nil {
			return nil, nil, err
		}
		c := &compared{Label: filepath.Base(filepath.Clean(d)), Dir: d, Run: r}
		if names[c.Label] > 1 {
			c.Label = filepath.Clean(d)
		}
		if c.Log, err = metrics.ReadIntervalLog(filepath.Join(d, results.HlogFile), r.Load.WarmupS); err != nil {
			notes = append(notes, c.Label+": "+missingNote(results.HlogFile, err)+": its spectra are left out.")
		}
		if c.Ser, err = readSeries(filepath.Join(d, results.SeriesFile)); err != nil {
			notes = append(notes, c.Label+": "+missingNote(results.SeriesFile, err)+": its throughput over time is left out.")
			c.Ser = &series{Rows: map[string][]seriesRow{}}
		}
		if r.Status != results.StatusOK {
			notes = append(notes, fmt.Sprintf("%s has status %s: its figures may not be comparable.", c.Label, r.Status))
		}
		out = append(out, c)
	}
	return out, notes, nil
}

// metric is one compared figure of an operation.
type metric struct {
	Name         string
	HigherBetter bool
	Get          func(s metrics.OpSummary) (float64, bool)
	Fmt          func(float64) string
}

func msMetric(name string, f func(s metrics.OpSummary) *float64) metric {
	return metric{Name: name + " ms", Fmt: func(v float64) string { return ms(&v) }, Get: func(s metrics.OpSummary) (float64, bool) {
		if p := f(s); p != nil {
			return *p, true
		}
		return 0, false
	}}
}

var compareMetrics = []metric{
	{Name: "ops/s", HigherBetter: true, Fmt: fmtNum, Get: func(s metrics.OpSummary) (float64, bool) { return s.ThroughputPerS, true }},
	{Name: "error rate", Fmt: fmtPct, Get: func(s metrics.OpSummary) (float64, bool) {
		if d := s.Count + s.Errors; d > 0 {
			return float64(s.Errors) / float64(d), true
		}
		return 0, false
	}},
	msMetric("mean", func(s metrics.OpSummary) *float64 { return s.MeanMs }),
	msMetric("p50", func(s metrics.OpSummary) *float64 { return s.P50Ms }),
	msMetric("p95", func(s metrics.OpSummary) *float64 { return s.P95Ms }),
	msMetric("p99", func(s metrics.OpSummary) *float64 { return s.P99Ms }),
	msMetric("p99.9", func(s metrics.OpSummary) *float64 { return s.P999Ms }),
	msMetric("max", func(s metrics.OpSummary) *float64 { return s.MaxMs }),
}

// cmpCell is a contender's value and its change against the baseline.
type cmpCell struct {
	V, Delta, Class string
}

type cmpRow struct {
	Op, Metric string
	Base       string
	Cells      []cmpCell
}

func compareRows(runs []*compared) []cmpRow {
	opSet := map[string]bool{}
	for _, c := range runs {
		for op := range c.Run.Summary {
			opSet[op] = true
		}
	}
	ops := slices.Sorted(maps.Keys(opSet))
	var rows []cmpRow
	for _, op := range ops {
		for _, m := range compareMetrics {
			base, bok := runs[0].Run.Summary[op]
			bv, bhas := m.Get(base)
			row := cmpRow{Op: op, Metric: m.Name, Base: "-"}
			if bok && bhas {
				row.Base = m.Fmt(bv)
			}
			for _, c := range runs[1:] {
				s, ok := c.Run.Summary[op]
				v, has := m.Get(s)
				cell := cmpCell{V: "-", Delta: "", Class: "same"}
				if ok && has {
					cell.V = m.Fmt(v)
					if bok && bhas {
						cell.Delta, cell.Class = delta(bv, v, m.HigherBetter)
					}
				}
				row.Cells = append(row.Cells, cell)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// delta formats the change from base to v and classes it better, worse
// or (within 1 %) the same.
func delta(base, v float64, higherBetter bool) (string, string) {
	if base == 0 {
		if v == 0 {
			return "±0", "same"
		}
		if (v > 0) == higherBetter {
			return "from 0", "better"
		}
		return "from 0", "worse"
	}
	d := (v - base) / math.Abs(base)
	s := fmt.Sprintf("%+.1f%%", 100*d)
	switch {
	case math.Abs(d) < 0.01:
		return s, "same"
	case (d > 0) == higherBetter:
		return s, "better"
	}
	return s, "worse"
}

// settingDiffs lists the settings that were set differently: whose values
// differ between the runs and that at least one run changed from its
// default. A setting only some runs have (another engine's) and that
// those runs left at its default is no difference: "(none) | 5s".
func settingDiffs(runs []*compared) [][]string {
	return changedDiffs("", runs, func(r *results.Run) (map[string]string, []string) { return r.Settings, r.Changed })
}

// changedDiffs is the rows, keys prefixed, of the settings that get
// returns (a run's values and the keys it changed from their defaults)
// whose values differ and that some run changed. A value left at its
// default is marked so, a setting a run does not have is "(none)".
func changedDiffs(prefix string, runs []*compared, get func(r *results.Run) (map[string]string, []string)) [][]string {
	keys, changed := map[string]bool{}, map[string]bool{}
	for _, c := range runs {
		set, ch := get(c.Run)
		for k := range set {
			keys[k] = true
		}
		for _, k := range ch {
			changed[k] = true
		}
	}
	var out [][]string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !changed[k] {
			continue
		}
		raw := diffRow(k, runs, func(r *results.Run) string {
			set, _ := get(r)
			if v, ok := set[k]; ok {
				return v
			}
			return "(none)"
		})
		if raw == nil {
			continue
		}
		row := []string{prefix + k}
		for _, c := range runs {
			set, ch := get(c.Run)
			v, ok := set[k]
			switch {
			case !ok:
				v = "(none)"
			case !slices.Contains(ch, k):
				v += " (default)"
			}
			row = append(row, v)
		}
		out = append(out, row)
	}
	return out
}

type compareView struct {
	Meta     pageMeta
	Labels   []string
	Base     string
	Runs     []runLine
	Answer   []answerRow
	Verdicts []string
	Facts    figTable
	Settings figTable
	Versions *figTable // the server banners in full, when shortened
	Rows     []cmpRow
	Spectra  []chart
	Tput     chart
	Notes    []string
}

// runLine names a run of a comparison with its role, status and
// measured duration.
type runLine struct {
	Role, Label, Status, State string
}

// WriteCompare writes a page comparing the runs in dirs to path; the first
// run is the baseline.
func WriteCompare(path string, dirs []string) error {
	runs, notes, err := loadCompared(dirs)
	if err != nil {
		return err
	}
	if len(runs) < 2 {
		return fmt.Errorf("compare: need at least two runs, got %d", len(runs))
	}
	v := &compareView{Rows: compareRows(runs), Notes: notes, Base: runs[0].Label, Answer: answerRows(runs)}
	v.Verdicts = totalVerdicts(v.Answer)
	for i, c := range runs {
		v.Labels = append(v.Labels, c.Label)
		role := "baseline"
		if i > 0 {
			role = fmt.Sprintf("contender %d", i)
		}
		v.Runs = append(v.Runs, runLine{Role: role, Label: c.Label, Status: c.Run.Status, State: runState(c.Run)})
	}
	v.Meta = newMeta("scalelab: " + strings.Join(v.Labels, " vs "))
	v.Facts = figTable{Cols: append([]string{""}, v.Labels...), Wrap: true}
	for _, f := range []struct {
		k string
		g func(r *results.Run) string
	}{
		{"directory", nil},
		{"status", runState},
		{"scenario", func(r *results.Run) string { return r.Scenario }},
		{"engine", engineText},
		{"topology", topology},
		{"load model", func(r *results.Run) string { return loadText(r.Load) }},
		{"measured", func(r *results.Run) string { return fmtDuration(r.MeasuredS) }},
		{"started", func(r *results.Run) string { return r.Start.Format("2006-01-02 15:04:05 MST") }},
		{"host", func(r *results.Run) string { return fmt.Sprintf("%s, %d CPUs", r.Host.Hostname, r.Host.CPUs) }},
	} {
		row := []string{f.k}
		for _, c := range runs {
			if f.g == nil {
				row = append(row, c.Dir)
			} else {
				row = append(row, f.g(c.Run))
			}
		}
		v.Facts.Rows = append(v.Facts.Rows, row)
	}
	v.Settings = figTable{Title: "What differs between the runs", Cols: append([]string{"key"}, v.Labels...), Rows: differences(runs), Wrap: true}
	if len(v.Settings.Rows) == 0 {
		v.Settings.Note = "In every run, " + sameText + "."
	} else {
		v.Settings.Note = "Settings are listed where a run changed them from their default and the values differ; (none): the run's engine or scenario has no such setting."
	}
	if rows := fullVersions(runs); rows != nil {
		v.Versions = &figTable{Cols: []string{"run", "server version"}, Rows: rows, Wrap: true}
	}
	v.Spectra = compareSpectra(runs)
	v.Tput = compareThroughput(runs)
	b, err := render(compareTmpl, "compare", v)
	if err != nil {
		return err
	}
	return results.WriteFileAtomic(path, b)
}

func compareSpectra(runs []*compared) []chart {
	opSet := map[string]bool{}
	for _, c := range runs {
		if c.Log == nil {
			continue
		}
		for _, t := range c.Log.Tags {
			if !strings.HasSuffix(t, ".service") && !strings.HasSuffix(t, ".error") {
				opSet[t] = true
			}
		}
	}
	ops := slices.Sorted(maps.Keys(opSet))
	var out []chart
	for _, op := range ops {
		var lines []spectrumLine
		svc := false
		for i, c := range runs {
			if c.Log == nil {
				continue
			}
			if h := c.Log.Hists[op]; h != nil {
				lines = append(lines, spectrumLine{Name: c.Label, Hist: h, Color: color(i)})
			}
			if h := c.Log.Hists[op+".service"]; h != nil {
				lines = append(lines, spectrumLine{Name: c.Label + " service time", Hist: h, Color: color(i), Dash: true})
				svc = true
			}
		}
		note := "Measured window of each run, warm-up excluded."
		if svc {
			note += " Dashed: service time from the actual start."
		}
		out = append(out, spectrumChart(op+": latency by percentile", lines, note))
	}
	return out
}

func compareThroughput(runs []*compared) chart {
	spec := lineSpec{Title: "Throughput over time (all operations)", XLabel: "time since start", XZero: true, YLabel: "operations/s", XFmt: fmtSeconds,
		Empty: "no series to draw"}
	for i, c := range runs {
		width := bucketWidth(c.Ser)
		rows := bucketSeries(c.Ser, width)
		tl := timeline(rows, width)
		xs, ys := make([]float64, len(tl)), make([]float64, len(tl))
		for j, tk := range tl {
			xs[j] = tk.T
		}
		for _, rs := range rows {
			_, y := align(rs, tl, func(r seriesRow) float64 { return rate(r.Count, r) }, 0)
			for j, v := range y {
				if !math.IsNaN(v) {
					ys[j] += v
				}
			}
		}
		spec.Series = append(spec.Series, lineSeries{Name: c.Label, X: xs, Y: ys, Color: color(i)})
	}
	return spec.render()
}

// CompareTerminal prints the comparison of the runs in dirs (the first is
// the baseline) to w, the answer first: each run with its status and
// measured duration, each contender's verdict on the total, throughput
// and p99 per operation and in total with their change; then what
// differs, and the table of every figure.
func CompareTerminal(w io.Writer, dirs []string) error {
	runs, notes, err := loadCompared(dirs)
	if err != nil {
		return err
	}
	if len(runs) < 2 {
		return fmt.Errorf("compare: need at least two runs, got %d", len(runs))
	}
	for i, c := range runs {
		name := "baseline"
		if i > 0 {
			name = fmt.Sprintf("contender %d", i)
		}
		fmt.Fprintf(w, "%s: %s: %s\n", name, c.Dir, runState(c.Run))
	}
	if err := writeAnswer(w, runs); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note:", n)
	}
	writeDifferences(w, runs)
	fmt.Fprintln(w, "every figure:")
	tab := termtable.Table{Header: []string{"op", "metric", "baseline"}, Keys: 3, Group: 2, Right: true}
	for i := range runs[1:] {
		tab.Header = append(tab.Header, fmt.Sprintf("contender %d", i+1), "change")
	}
	for _, r := range compareRows(runs) {
		row := []string{r.Op, r.Metric, r.Base}
		for _, c := range r.Cells {
			row = append(row, c.V, c.Delta)
		}
		tab.Rows = append(tab.Rows, row)
	}
	return tab.Write(w, termtable.Width)
}

var compareTmpl = newTemplate("compare", `{{define "compare"}}{{template "head" .Meta}}
<h1>Comparison of {{len .Labels}} runs</h1>
<ul class="runs">{{range .Runs}}<li>{{.Role}}: <b>{{.Label}}</b> <span class="status {{.Status}}">{{.Status}}</span> <span class="mut">{{.State}}</span></li>{{end}}</ul>
<section id="answer">
<h2>Throughput and p99, per operation and in total</h2>
{{range $i, $v := .Verdicts}}<p class="verdict">Contender {{inc $i}} against the baseline, {{$v}}.</p>{{end}}
<div class="scroll"><table class="answer"><thead><tr><th>operation</th><th class="l">metric</th><th>{{.Base}}</th>{{range $i, $l := .Labels}}{{if $i}}<th>{{$l}}</th><th>change</th><th>verdict</th>{{end}}{{end}}</tr></thead><tbody>
{{range .Answer}}<tr{{if .Total}} class="total"{{end}}><td>{{.Op}}</td><td class="l">{{.Metric}}</td><td>{{.Base}}</td>{{range .Cells}}<td>{{.V}}</td><td class="{{.Class}}">{{.Delta}}</td><td class="{{.Class}}">{{verdict .}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
<p class="mut small">Throughput higher is better, p99 lower is better; within 1 % is the same. The total is every operation together: throughput summed, p99 of their histograms merged over the measured window.
Single runs include run-to-run noise: for confidence intervals and significance tests, run an experiment with repeats.</p>
</section>
{{range .Notes}}<div class="alert warn">{{.}}</div>{{end}}
{{template "table" .Settings}}
{{with .Versions}}<details><summary>Server versions in full</summary>{{template "table" .}}</details>{{end}}
<h2>The runs</h2>
{{template "table" .Facts}}
<h2>Baseline and contenders</h2>
<p>Baseline: <b>{{.Base}}</b>. Each contender's change is against the baseline; green is better, red worse, grey within 1 %.</p>
<div class="scroll"><table><thead><tr><th>operation</th><th class="l">metric</th><th>{{.Base}}</th>{{range $i, $l := .Labels}}{{if $i}}<th>{{$l}}</th><th>change</th>{{end}}{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Op}}</td><td class="l">{{.Metric}}</td><td>{{.Base}}</td>{{range .Cells}}<td>{{.V}}</td><td class="{{.Class}}">{{.Delta}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
<h2>Latency percentile spectra</h2>
<div class="grid2">{{range .Spectra}}{{template "chart" .}}{{else}}<p class="empty">No interval logs to draw.</p>{{end}}</div>
<h2>Throughput over time</h2>
{{template "chart" .Tput}}
{{template "foot" .Meta}}{{end}}`)
