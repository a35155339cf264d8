package report

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"time"

	"github.com/scalelab/scalelab/results"
)

// Every page is one self-contained file: the style sheet is part of the
// template source, charts are inline SVG, there is no script and nothing
// is fetched. Every value reaches the page through html/template, which
// escapes it for its context.

// pageMeta is what every page's head and footer need.
type pageMeta struct {
	Title     string
	Generated string
	Version   string
}

func newMeta(title string) pageMeta {
	return pageMeta{Title: title, Generated: time.Now().UTC().Format("2006-01-02 15:04:05 MST"), Version: results.BuildVersion()}
}

// fact is one labelled value in a header or settings table.
type fact struct {
	K, V  string
	Class string
}

// figTable is a plain table of strings.
type figTable struct {
	Title string
	Note  string
	Cols  []string
	Rows  [][]string
	Wrap  bool // left-aligned cells that wrap (text rather than numbers)
}

const css = `
:root{--fg:#1b1b1b;--mut:#5a5a5a;--line:#d7d7d7;--bg2:#f4f5f7;--ok:#0a6b2d;--bad:#b00020;--warn:#8a5a00}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:.5rem 1rem 2rem;color:var(--fg);background:#fff}
h1{font-size:1.45rem;margin:.6rem 0 .2rem}h2{font-size:1.15rem;margin:1.6rem 0 .4rem;border-bottom:1px solid var(--line);padding-bottom:.15rem}
h3{font-size:1rem;margin:1rem 0 .3rem}
p{margin:.35rem 0}.mut{color:var(--mut)}.small{font-size:.85rem}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em;overflow-wrap:anywhere}
.status{display:inline-block;padding:.05rem .5rem;border-radius:.8rem;font-weight:600;color:#fff;background:var(--mut)}
.status.na{background:var(--mut)}.status.ok{background:var(--ok)}.status.failed,.status.incomplete,.status.running{background:var(--bad)}.status.interrupted{background:var(--warn)}
.alert{border-left:4px solid var(--bad);background:#fdf0f2;padding:.4rem .7rem;margin:.5rem 0;overflow-wrap:anywhere}
.alert.warn{border-color:var(--warn);background:#fbf6ec}.alert.note{border-color:var(--mut);background:var(--bg2)}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:.6rem 0}
.facts dt{color:var(--mut)}.facts dd{margin:0;overflow-wrap:anywhere}
.kpis{display:flex;flex-wrap:wrap;gap:.5rem;margin:.8rem 0}
.kpi{background:var(--bg2);border-radius:.4rem;padding:.35rem .7rem;min-width:8.5rem}
.kpi b{display:block;font-size:1.2rem;font-variant-numeric:tabular-nums}.kpi span{color:var(--mut);font-size:.8rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%}
table{border-collapse:collapse;margin:.4rem 0;font-variant-numeric:tabular-nums;font-size:.9rem}
th,td{border-bottom:1px solid var(--line);padding:.2rem .55rem;text-align:right;white-space:nowrap}
th{background:var(--bg2);font-weight:600}
th:first-child,td:first-child,td.l,th.l{text-align:left}
td.wrap{white-space:normal;overflow-wrap:anywhere;text-align:left;max-width:40rem}
tr.changed td{font-weight:600}tr.grp td{border-top:2px solid #bbb}
tr.total td{font-weight:600}tr:not(.total)+tr.total td{border-top:2px solid #bbb}
ul.runs{list-style:none;padding:0;margin:.3rem 0}ul.runs li{margin:.1rem 0;overflow-wrap:anywhere}p.verdict{font-weight:600;margin:.3rem 0}
.better{color:var(--ok)}.worse{color:var(--bad)}.same{color:var(--mut)}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,30rem),1fr));gap:.5rem 1.2rem}
figure.chart{margin:.4rem 0 1rem;max-width:760px;break-inside:avoid;page-break-inside:avoid}
figure.chart figcaption{font-weight:600;font-size:.95rem}
figure.chart p.note{color:var(--mut);font-size:.82rem;margin:.1rem 0}
figure.chart svg{width:100%;height:auto;display:block;overflow:visible}
svg text{font-size:12px;fill:#333;font-family:system-ui,sans-serif}
svg .tick{fill:#555}svg .lbl{fill:#333}svg .bandlbl{fill:#777;font-size:11px}svg .reflbl{fill:#9a1b1b;font-size:11px}
svg .axis{stroke:#888;stroke-width:1}svg .grid{stroke:#e6e6e6;stroke-width:1}
svg .ref{stroke:#c62828;stroke-width:1;stroke-dasharray:5 4}
svg .band{fill:#eef0f3}
svg .mark{stroke:#6a3d9a;stroke-width:1.3;stroke-dasharray:2 3}svg .marklbl{fill:#6a3d9a;font-size:11px}
svg path{fill:none;stroke-width:1.8;stroke-linejoin:round}svg path.dash{stroke-dasharray:6 4}
svg .whisker{stroke-width:1.4}svg .bar{opacity:.85}
ul.legend{list-style:none;padding:0;margin:.1rem 0;display:flex;flex-wrap:wrap;gap:.2rem 1rem;font-size:.85rem}
ul.legend li{display:flex;align-items:center;gap:.35rem;overflow-wrap:anywhere}
ul.legend svg{width:22px;height:6px;flex:none}
p.empty{color:var(--mut);font-style:italic}
footer{margin-top:2rem;color:var(--mut);font-size:.8rem}
@media (max-width:640px){body{font-size:14px;padding:.4rem .6rem 1.5rem}svg text{font-size:19px}svg .bandlbl,svg .reflbl,svg .marklbl{font-size:17px}
.facts{grid-template-columns:1fr}.facts dt{margin-top:.3rem}th,td{padding:.15rem .35rem}}
@media print{body{max-width:none;font-size:10pt;padding:0}.scroll{overflow:visible}h2{break-after:avoid}
table{font-size:7.5pt}th,td{padding:1px 3px}td.wrap{max-width:none}.grid2{display:block}
table,figure{break-inside:avoid}.status{color:#000;border:1px solid #000;background:none!important}a{color:inherit;text-decoration:none}}
`

const layout = `{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="scalelab {{.Version}}">
<title>{{.Title}}</title>
<style>` + css + `</style></head><body>
{{end}}
{{define "foot"}}<footer>Generated by scalelab {{.Version}} at {{.Generated}}. This page is self-contained: it loads nothing from the network.</footer>
</body></html>
{{end}}
{{define "chart"}}<figure class="chart">{{if .Title}}<figcaption>{{.Title}}</figcaption>{{end}}
{{- if .Empty}}<p class="empty">{{.Empty}}</p>{{else}}
<svg viewBox="0 0 {{n .W}} {{n .H}}" role="img" aria-label="{{.Title}}"><title>{{.Title}}</title>
{{range .Rects}}<rect x="{{n .X}}" y="{{n .Y}}" width="{{n .W}}" height="{{n .H}}"{{with .Class}} class="{{.}}"{{end}}{{with .Fill}} fill="{{.}}"{{end}}>{{with .Tip}}<title>{{.}}</title>{{end}}</rect>
{{end}}{{range .Lines}}<line x1="{{n .X1}}" y1="{{n .Y1}}" x2="{{n .X2}}" y2="{{n .Y2}}"{{with .Class}} class="{{.}}"{{end}}{{with .Stroke}} stroke="{{.}}"{{end}}/>
{{end}}{{range .Paths}}<path d="{{.D}}" stroke="{{.Stroke}}"{{with .Class}} class="{{.}}"{{end}}>{{with .Tip}}<title>{{.}}</title>{{end}}</path>
{{end}}{{range .Circles}}<circle cx="{{n .X}}" cy="{{n .Y}}" r="3" fill="{{.Fill}}">{{with .Tip}}<title>{{.}}</title>{{end}}</circle>
{{end}}{{range .Texts}}<text x="{{n .X}}" y="{{n .Y}}"{{with .Anchor}} text-anchor="{{.}}"{{end}}{{with .Class}} class="{{.}}"{{end}}>{{.S}}</text>
{{end}}</svg>{{end}}
{{- if .Legend}}<ul class="legend">{{range .Legend}}<li><svg viewBox="0 0 22 6"><line x1="0" y1="3" x2="22" y2="3" stroke="{{.Color}}" stroke-width="3"{{if .Dash}} stroke-dasharray="5 3"{{end}}/></svg>{{.Label}}</li>{{end}}</ul>{{end}}
{{- with .Note}}<p class="note">{{.}}</p>{{end}}</figure>
{{end}}
{{define "facts"}}<dl class="facts">{{range .}}<dt>{{.K}}</dt><dd{{with .Class}} class="{{.}}"{{end}}>{{.V}}</dd>{{end}}</dl>{{end}}
{{define "table"}}{{if .Title}}<h3>{{.Title}}</h3>{{end}}{{$w := .Wrap}}<div class="scroll"><table><thead><tr>{{range .Cols}}<th{{if $w}} class="l"{{end}}>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if and $w $i}} class="wrap"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody></table></div>{{with .Note}}<p class="mut small">{{.}}</p>{{end}}{{end}}
`

// funcs are the template helpers.
var funcs = template.FuncMap{
	"pct": func(v float64) float64 {
		if v == 0 {
			return 95
		}
		return 100 * v
	},
	"inc":     func(i int) int { return i + 1 },
	"verdict": verdictText,
	"n": func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "0"
		}
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	},
}

// newTemplate parses the layout and a page's own templates.
func newTemplate(name, src string) *template.Template {
	return template.Must(template.Must(template.New(name).Funcs(funcs).Parse(layout)).Parse(src))
}

// render executes a page template into bytes.
func render(t *template.Template, name string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		return nil, fmt.Errorf("render %s page: %w", name, err)
	}
	return b.Bytes(), nil
}

// fmtPct formats a fraction as a percentage.
func fmtPct(f float64) string {
	switch {
	case math.IsNaN(f):
		return "-"
	case f == 0:
		return "0%"
	case math.Abs(f) < 0.001:
		return strconv.FormatFloat(f*100, 'g', 2, 64) + "%"
	}
	return strconv.FormatFloat(f*100, 'f', 2, 64) + "%"
}

// fmtDuration formats seconds for a header: "59.9 s", "1 h 0 m 2 s".
func fmtDuration(s float64) string {
	if s < 120 {
		return trimNum(s, 1) + " s"
	}
	return time.Duration(math.Round(s) * float64(time.Second)).String()
}
