package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// point is one interval of one operation from series.csv.
type point struct {
	t, tput, p50, p99 float64
	hasP50, hasP99    bool
}

// readSeries reads series.csv into per-operation points; a torn last line
// (a crash mid-write) is ignored.
func readSeries(path string) (map[string][]point, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	out := map[string][]point{}
	var order []string
	header := true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			break // torn line
		}
		if header {
			header = false
			continue
		}
		if len(rec) < 8 {
			continue
		}
		var p point
		p.t, _ = strconv.ParseFloat(rec[0], 64)
		p.tput, _ = strconv.ParseFloat(rec[5], 64)
		if v, err := strconv.ParseFloat(rec[6], 64); err == nil {
			p.p50, p.hasP50 = v, true
		}
		if v, err := strconv.ParseFloat(rec[7], 64); err == nil {
			p.p99, p.hasP99 = v, true
		}
		if _, ok := out[rec[2]]; !ok {
			order = append(order, rec[2])
		}
		out[rec[2]] = append(out[rec[2]], p)
	}
	return out, order, nil
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// lineChart draws series as an inline SVG line chart (log-scaled y when
// logY). Each series is a name and its (x, y) points.
func lineChart(title, yLabel string, names []string, xs, ys map[string][]float64, logY bool) template.HTML {
	const w, h, left, bottom, top, right = 720.0, 260.0, 60.0, 30.0, 24.0, 130.0
	var maxX, minY, maxY = 0.0, math.Inf(1), math.Inf(-1)
	for _, n := range names {
		for i, x := range xs[n] {
			y := ys[n][i]
			if logY && y <= 0 {
				continue
			}
			maxX = math.Max(maxX, x)
			minY, maxY = math.Min(minY, y), math.Max(maxY, y)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, template.HTMLEscapeString(title))
	fmt.Fprintf(&b, `<text x="%.0f" y="16" class="title">%s</text>`, left, template.HTMLEscapeString(title))
	if math.IsInf(minY, 1) || maxX <= 0 {
		b.WriteString(`<text x="60" y="120">no data</text></svg>`)
		return template.HTML(b.String()) //nolint:gosec // built from escaped parts and numbers
	}
	if !logY {
		minY = 0
	}
	if maxY == minY {
		maxY = minY + 1
	}
	fy := func(y float64) float64 {
		if logY {
			y, lo, hi := math.Log10(math.Max(y, minY)), math.Log10(minY), math.Log10(maxY)
			if hi == lo {
				hi = lo + 1
			}
			return h - bottom - (y-lo)/(hi-lo)*(h-bottom-top)
		}
		return h - bottom - (y-minY)/(maxY-minY)*(h-bottom-top)
	}
	fx := func(x float64) float64 { return left + x/maxX*(w-left-right) }
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" class="axis"/>`, left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" class="axis"/>`, left, top, left, h-bottom)
	fmt.Fprintf(&b, `<text x="4" y="%.0f" class="lbl">%s</text>`, top+4, fmtNum(maxY))
	fmt.Fprintf(&b, `<text x="4" y="%.0f" class="lbl">%s</text>`, h-bottom, fmtNum(minY))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="lbl">%s s</text>`, w-right-30, h-8, fmtNum(maxX))
	fmt.Fprintf(&b, `<text x="4" y="%.0f" class="lbl">%s</text>`, h-8, template.HTMLEscapeString(yLabel))
	for i, n := range names {
		color := palette[i%len(palette)]
		var pts []string
		for j, x := range xs[n] {
			if y := ys[n][j]; !logY || y > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", fx(x), fy(y)))
			}
		}
		if len(pts) == 1 {
			pts = append(pts, pts[0])
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, color, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="%s" class="lbl">%s</text>`, w-right+8, top+14*float64(i+1), color, template.HTMLEscapeString(n))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built from escaped parts and numbers
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

type htmlData struct {
	Run    *results.Run
	Ops    []string
	Charts []template.HTML
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms": ms,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>scalelab: {{.Run.Scenario}} on {{.Run.Engine}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1rem auto;max-width:960px;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0;font-variant-numeric:tabular-nums}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th:first-child,td:first-child{text-align:left}.chart{width:100%;height:auto;max-width:720px;display:block}
.axis{stroke:#888}.lbl{font-size:11px;fill:#555}.title{font-size:13px;font-weight:600}
.status-ok{color:#080}.status-failed,.status-interrupted,.status-incomplete{color:#b00}
.scroll{overflow-x:auto}@media print{.chart{max-width:100%}}
</style></head><body>
<h1>{{.Run.Scenario}} on {{.Run.Engine}}</h1>
<p>Status: <b class="status-{{.Run.Status}}">{{.Run.Status}}</b> (exit code {{.Run.ExitCode}}){{if .Run.Error}}: {{.Run.Error}}{{end}}<br>
Load: {{.Run.Load.Model}} {{range $k, $v := .Run.Load.Params}}{{$k}}={{$v}} {{end}}; measured {{printf "%.1f" .Run.MeasuredS}} s, warm-up {{.Run.Load.WarmupS}} s excluded<br>
{{with .Run.Server}}Server: {{.Version}} at {{.Target}}<br>{{end}}
Started {{.Run.Start.Format "2006-01-02 15:04:05 MST"}}; scalelab {{.Run.Scalelab.Version}}; host {{.Run.Host.CPUs}} CPUs {{.Run.Host.CPUModel}}</p>
{{range .Run.Failures}}<p class="status-failed">FAILED: {{.}}</p>{{end}}
{{range .Run.Warnings}}<p>Warning: {{.}}</p>{{end}}
<h2>Summary</h2><div class="scroll"><table><tr><th>operation</th><th>count</th><th>errors</th><th>ops/s</th><th>mean ms</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th></tr>
{{range $op := .Ops}}{{with index $.Run.Summary $op}}<tr><td>{{.Op}}</td><td>{{.Count}}</td><td>{{.Errors}}</td><td>{{printf "%.1f" .ThroughputPerS}}</td><td>{{ms .MeanMs}}</td><td>{{ms .P50Ms}}</td><td>{{ms .P90Ms}}</td><td>{{ms .P95Ms}}</td><td>{{ms .P99Ms}}</td><td>{{ms .P999Ms}}</td><td>{{ms .MaxMs}}</td></tr>{{end}}{{end}}
</table></div>
<p>A dash marks a percentile the sample count cannot support.</p>
{{range $op := .Ops}}{{with index $.Run.Summary $op}}{{if .ErrorsByClass}}<p>Errors of {{.Op}}: {{range $c, $n := .ErrorsByClass}}{{$c}} {{$n}} {{end}}</p>{{end}}{{end}}{{end}}
<h2>Over time</h2>{{range .Charts}}{{.}}{{end}}
<h2>Settings</h2><div class="scroll"><table><tr><th>key</th><th>value</th></tr>{{range $k, $v := .Run.Settings}}<tr><td>{{$k}}</td><td>{{$v}}</td></tr>{{end}}</table></div>
</body></html>
`))

// WriteHTML writes the run's self-contained report page (no external
// resources; every string escaped) from run.json data and series.csv.
func WriteHTML(path string, r *results.Run, dir string) error {
	data := htmlData{Run: r, Ops: sortedOps(r.Summary)}
	if series, order, err := readSeries(filepath.Join(dir, results.SeriesFile)); err == nil {
		xs, p99, p50, tp := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
		for _, op := range order {
			for _, p := range series[op] {
				xs[op] = append(xs[op], p.t)
				tp[op] = append(tp[op], p.tput)
				p99[op] = append(p99[op], ifElse(p.hasP99, p.p99, 0))
				p50[op] = append(p50[op], ifElse(p.hasP50, p.p50, 0))
			}
		}
		data.Charts = append(data.Charts,
			lineChart("Throughput per operation", "ops/s", order, xs, tp, false),
			lineChart("p50 latency (ms, log scale)", "ms", order, xs, p50, true),
			lineChart("p99 latency (ms, log scale)", "ms", order, xs, p99, true))
	}
	var b bytes.Buffer
	if err := page.Execute(&b, data); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return results.WriteFileAtomic(path, b.Bytes())
}

func ifElse(c bool, a, b float64) float64 {
	if c {
		return a
	}
	return b
}
