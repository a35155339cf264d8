package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Charts are inline SVG, drawn by scalelab itself: a chart is computed
// here as plain data (coordinates, path data made of numbers, and label
// strings) and written by the page template, which escapes every string.

// chart is one rendered chart: the SVG parts and an HTML legend.
type chart struct {
	Title   string
	Note    string // a caption under the chart
	W, H    float64
	Rects   []svgRect
	Lines   []svgLine
	Paths   []svgPath
	Circles []svgCircle
	Texts   []svgText
	Legend  []legendItem
	Empty   string     // shown instead of the SVG when there is nothing to draw
	frame   *timeFrame // time charts: their layout, for fault markers (faults.go)
}

type svgRect struct {
	X, Y, W, H float64
	Class      string
	Fill       string
	Tip        string
}

type svgLine struct {
	X1, Y1, X2, Y2 float64
	Class          string
	Stroke         string
}

type svgPath struct {
	D      string
	Stroke string
	Class  string // "dash" for dashed lines
	Tip    string
}

type svgCircle struct {
	X, Y  float64
	Fill  string
	Tip   string
	Class string
}

type svgText struct {
	X, Y   float64
	Anchor string // start, middle, end
	Class  string
	Fill   string
	S      string
}

type legendItem struct {
	Color string
	Dash  bool
	Label string
}

// palette holds colors that stay apart for the common forms of color
// blindness and when printed in grey (Okabe-Ito, then extras).
var palette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#8c564b", "#7f7f7f", "#bcbd22"}

func color(i int) string { return palette[i%len(palette)] }

// Geometry shared by charts, in SVG user units (the SVG scales to the
// page width).
const (
	chartW      = 640.0
	chartH      = 260.0
	marginLeft  = 62.0
	marginRight = 14.0
	marginTop   = 12.0
	marginBot   = 38.0
)

// axis maps data values to pixels, linearly or on a log10 scale.
type axis struct {
	lo, hi float64 // data range (for a log axis, positive)
	p0, p1 float64 // pixel range
	log    bool
}

func (a axis) px(v float64) float64 {
	lo, hi := a.lo, a.hi
	if a.log {
		v = math.Log10(math.Max(v, a.lo))
		lo, hi = math.Log10(a.lo), math.Log10(a.hi)
	}
	if hi == lo {
		return (a.p0 + a.p1) / 2
	}
	return a.p0 + (v-lo)/(hi-lo)*(a.p1-a.p0)
}

// niceStep returns a step of 1, 2 or 5 times a power of ten giving about
// n steps over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsInf(span, 0) || math.IsNaN(span) {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// linearTicks returns tick values covering [lo, hi] and the range rounded
// out to whole ticks.
func linearTicks(lo, hi float64, n int) (ticks []float64, nlo, nhi float64) {
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep(hi-lo, n)
	nlo = math.Floor(lo/step+1e-9) * step
	nhi = math.Ceil(hi/step-1e-9) * step
	for v := nlo; v <= nhi+step/2; v += step {
		ticks = append(ticks, math.Round(v/step)*step)
	}
	return ticks, nlo, nhi
}

// logTicks returns powers of ten covering [lo, hi] (and 2x, 5x between
// them over a short range) and the range rounded out to decades.
func logTicks(lo, hi float64) (ticks []float64, nlo, nhi float64) {
	if lo <= 0 {
		lo = hi / 1000
	}
	if hi <= lo {
		hi = lo * 10
	}
	a, b := math.Floor(math.Log10(lo)+1e-9), math.Ceil(math.Log10(hi)-1e-9)
	if b == a {
		b = a + 1
	}
	for e := a; e <= b; e++ {
		ticks = append(ticks, math.Pow(10, e))
		if b-a <= 2 && e < b {
			ticks = append(ticks, 2*math.Pow(10, e), 5*math.Pow(10, e))
		}
	}
	return ticks, math.Pow(10, a), math.Pow(10, b)
}

// fmtNum formats a number for an axis or a table: short, no exponent for
// ordinary magnitudes.
func fmtNum(v float64) string {
	av := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v == 0:
		return "0"
	case av >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', -1, 64) + "G"
	case av >= 1e6:
		return trimNum(v/1e6, 1) + "M"
	case av >= 1e4:
		return trimNum(v/1e3, 1) + "k"
	case av >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case av >= 1:
		return trimNum(v, 2)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func trimNum(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// fmtMsAxis labels a latency in milliseconds: "0.1 ms", "20 ms", "1 s".
func fmtMsAxis(ms float64) string {
	switch {
	case ms == 0:
		return "0"

	case ms >= 1000:
		return fmtNum(ms/1000) + " s"
	case ms >= 1:
		return fmtNum(ms) + " ms"
	case ms >= 0.001:
		return fmtNum(ms*1000) + " µs"
	}
	return fmtNum(ms*1e6) + " ns"
}

// fmtSeconds labels a time axis in seconds.
func fmtSeconds(s float64) string {
	if s >= 3600 && math.Mod(s, 60) == 0 {
		return fmt.Sprintf("%dm", int(s/60))
	}
	return fmtNum(s) + "s"
}

// pathBuilder accumulates SVG path data from points; a NaN breaks the line.
// A run of one point between breaks has no length to draw: it is kept in
// isolated instead, for the caller to draw as a dot.
type pathBuilder struct {
	b        strings.Builder
	n        int     // points in the current run
	fx, fy   float64 // the run's first point
	isolated [][2]float64
}

func (p *pathBuilder) write(cmd byte, x, y float64) {
	p.b.WriteByte(cmd)
	p.b.WriteString(strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64))
	p.b.WriteByte(',')
	p.b.WriteString(strconv.FormatFloat(math.Round(y*10)/10, 'f', -1, 64))
}

func (p *pathBuilder) point(x, y float64) {
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(y, 0) {
		p.endRun()
		return
	}
	switch p.n {
	case 0:
		p.fx, p.fy = x, y
	case 1:
		p.write('M', p.fx, p.fy)
		p.write('L', x, y)
	default:
		p.write('L', x, y)
	}
	p.n++
}

func (p *pathBuilder) endRun() {
	if p.n == 1 {
		p.isolated = append(p.isolated, [2]float64{p.fx, p.fy})
	}
	p.n = 0
}

// String ends the last run and returns the path data ("" when no run has
// two points).
func (p *pathBuilder) String() string {
	p.endRun()
	return p.b.String()
}
