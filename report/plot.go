package report

import (
	"math"
	"unicode/utf8"
)

// lineSeries is one line of a line chart. A NaN in Y breaks the line.
// Lo and Hi, when set, draw a whisker (a confidence interval) at each
// point; Markers draws a dot at each point.
type lineSeries struct {
	Name    string
	Color   string
	Dash    bool
	X, Y    []float64
	Lo, Hi  []float64
	Markers bool
}

// refLine is a horizontal (line charts) or vertical (bar charts) reference
// line with a label, such as a response-time limit or an SLO.
type refLine struct {
	V     float64
	Label string
}

// band shades an x range, such as the warm-up.
type band struct {
	X0, X1 float64
	Label  string
}

// lineSpec describes a line chart.
type lineSpec struct {
	Title, Note    string
	XLabel, YLabel string
	LogY           bool
	YFmt, XFmt     func(float64) string
	XTicks         []float64 // fixed x ticks; nil for round numbers
	XZero          bool      // start the x axis at 0 (time axes)
	XMax           float64   // when > 0, the x axis reaches at least XMax (one time axis for every chart of a run)
	LogX           bool      // log10 x axis (loads that double)
	Series         []lineSeries
	RefY           []refLine // always inside the y range
	Bands          []band
	Empty          string // shown when no series has a point
}

// render lays the chart out.
func (s *lineSpec) render() chart {
	c := chart{Title: s.Title, Note: s.Note, W: chartW, H: chartH}
	xlo, xhi, ylo, yhi := s.dataRange()
	if math.IsInf(xlo, 1) {
		c.Empty = s.Empty
		if c.Empty == "" {
			c.Empty = "no data to draw"
		}
		return c
	}
	for _, r := range s.RefY {
		if s.okY(r.V) {
			ylo, yhi = math.Min(ylo, r.V), math.Max(yhi, r.V)
		}
	}
	yf, xf := s.YFmt, s.XFmt
	if yf == nil {
		yf = fmtNum
	}
	if xf == nil {
		xf = fmtNum
	}
	ya, yt := s.yAxis(ylo, yhi)
	xa, xt := s.xAxis(xlo, xhi)
	if s.XZero {
		c.frame = &timeFrame{xa: xa, top: ya.p1, bot: ya.p0}
	}
	s.drawBands(&c, xa, ya)
	s.drawAxes(&c, xa, ya, xt, yt, xf, yf)
	s.drawRefY(&c, xa, ya)
	for i, ser := range s.Series {
		s.drawSeries(&c, i, ser, xa, ya, xf, yf)
	}
	return c
}

// okY reports whether v can be drawn on the y axis.
func (s *lineSpec) okY(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!s.LogY || v > 0)
}

// okX reports whether v can be drawn on the x axis.
func (s *lineSpec) okX(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!s.LogX || v > 0)
}

// dataRange returns the extent of the series' drawable points and
// whiskers; xlo is +Inf when there is none.
func (s *lineSpec) dataRange() (xlo, xhi, ylo, yhi float64) {
	xlo, xhi, ylo, yhi = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, ser := range s.Series {
		for i, x := range ser.X {
			if i >= len(ser.Y) || !s.okY(ser.Y[i]) || !s.okX(x) {
				continue
			}
			xlo, xhi = math.Min(xlo, x), math.Max(xhi, x)
			ylo, yhi = math.Min(ylo, ser.Y[i]), math.Max(yhi, ser.Y[i])
			for _, b := range [][]float64{ser.Lo, ser.Hi} {
				if i < len(b) && s.okY(b[i]) {
					ylo, yhi = math.Min(ylo, b[i]), math.Max(yhi, b[i])
				}
			}
		}
	}
	return xlo, xhi, ylo, yhi
}

// yAxis lays out the y axis over [ylo, yhi] and returns it with its ticks.
func (s *lineSpec) yAxis(ylo, yhi float64) (axis, []float64) {
	var yt []float64
	ya := axis{p0: chartH - marginBot, p1: marginTop + 20, log: s.LogY}
	if s.LogY {
		yt, ya.lo, ya.hi = logTicks(ylo, yhi)
	} else {
		yt, ya.lo, ya.hi = linearTicks(math.Min(0, ylo), yhi, 5)
	}
	return ya, yt
}

// xAxis lays out the x axis over [xlo, xhi] and returns it with its ticks:
// the fixed ones when set, else powers of ten or round numbers.
func (s *lineSpec) xAxis(xlo, xhi float64) (axis, []float64) {
	xa := axis{p0: marginLeft, p1: chartW - marginRight, log: s.LogX}
	xt := s.XTicks
	if xt != nil {
		xa.lo, xa.hi = math.Min(xt[0], xlo), math.Max(xt[len(xt)-1], xhi)
	} else if s.LogX {
		xt, xa.lo, xa.hi = logTicks(xlo, xhi)
		if len(xt) > 8 {
			xt = decades(xt)
		}
	} else {
		from := xlo
		if s.XZero {
			from = math.Min(0, xlo)
		}
		xt, xa.lo, xa.hi = linearTicks(from, math.Max(xhi, s.XMax), 6)
		if xlo >= 0 && xa.lo < 0 {
			xa.lo = 0
		}
	}
	if xa.hi == xa.lo {
		xa.hi = xa.lo + 1
	}
	return xa, xt
}

// decades keeps the ticks that are whole powers of ten.
func decades(ticks []float64) []float64 {
	var out []float64
	for _, v := range ticks {
		if e := math.Log10(v); e == math.Round(e) {
			out = append(out, v)
		}
	}
	return out
}

// drawBands shades the bands' x ranges that fall on the axis, with their labels.
func (s *lineSpec) drawBands(c *chart, xa, ya axis) {
	plotTop, plotBot := ya.p1, ya.p0
	for _, b := range s.Bands {
		x0, x1 := xa.px(math.Max(b.X0, xa.lo)), xa.px(math.Min(b.X1, xa.hi))
		if x1 > x0 {
			c.Rects = append(c.Rects, svgRect{X: x0, Y: plotTop, W: x1 - x0, H: plotBot - plotTop, Class: "band", Tip: b.Label})
			c.Texts = append(c.Texts, svgText{X: x0 + 3, Y: plotTop + 11, Class: "bandlbl", S: b.Label})
		}
	}
}

// drawAxes draws the y grid, the x ticks, both axes and their labels.
func (s *lineSpec) drawAxes(c *chart, xa, ya axis, xt, yt []float64, xf, yf func(float64) string) {
	plotTop, plotBot := ya.p1, ya.p0
	for _, v := range yt {
		if v < ya.lo-1e-12 || v > ya.hi*(1+1e-9) {
			continue
		}
		y := ya.px(v)
		c.Lines = append(c.Lines, svgLine{X1: xa.p0, Y1: y, X2: xa.p1, Y2: y, Class: "grid"})
		c.Texts = append(c.Texts, svgText{X: xa.p0 - 5, Y: y + 4, Anchor: "end", Class: "tick", S: yf(v)})
	}
	for _, v := range xt {
		if v < xa.lo-1e-9 || v > xa.hi+1e-9 {
			continue
		}
		x := xa.px(v)
		c.Lines = append(c.Lines, svgLine{X1: x, Y1: plotBot, X2: x, Y2: plotBot + 4, Class: "axis"})
		c.Texts = append(c.Texts, svgText{X: x, Y: plotBot + 16, Anchor: "middle", Class: "tick", S: xf(v)})
	}
	c.Lines = append(c.Lines,
		svgLine{X1: xa.p0, Y1: plotBot, X2: xa.p1, Y2: plotBot, Class: "axis"},
		svgLine{X1: xa.p0, Y1: plotTop, X2: xa.p0, Y2: plotBot, Class: "axis"})
	if s.XLabel != "" {
		c.Texts = append(c.Texts, svgText{X: (xa.p0 + xa.p1) / 2, Y: chartH - 4, Anchor: "middle", Class: "lbl", S: s.XLabel})
	}
	if s.YLabel != "" {
		c.Texts = append(c.Texts, svgText{X: 4, Y: 14, Class: "lbl", S: s.YLabel})
	}
}

// drawRefY draws the horizontal reference lines with their labels.
func (s *lineSpec) drawRefY(c *chart, xa, ya axis) {
	for _, r := range s.RefY {
		if !s.okY(r.V) {
			continue
		}
		y := ya.px(r.V)
		c.Lines = append(c.Lines, svgLine{X1: xa.p0, Y1: y, X2: xa.p1, Y2: y, Class: "ref"})
		c.Texts = append(c.Texts, svgText{X: xa.p1 - 2, Y: y - 3, Anchor: "end", Class: "reflbl", S: r.Label})
	}
}

// drawSeries draws the i-th series: its line, whiskers and markers (or
// dots for isolated points), and its legend entry.
func (s *lineSpec) drawSeries(c *chart, i int, ser lineSeries, xa, ya axis, xf, yf func(float64) string) {
	col := ser.Color
	if col == "" {
		col = color(i)
	}
	var pb pathBuilder
	for j, x := range ser.X {
		y := math.NaN()
		if j < len(ser.Y) && s.okY(ser.Y[j]) && s.okX(x) {
			y = ya.px(ser.Y[j])
		}
		pb.point(xa.px(x), y)
		if math.IsNaN(y) {
			continue
		}
		if j < len(ser.Lo) && j < len(ser.Hi) && s.okY(ser.Hi[j]) && !math.IsNaN(ser.Lo[j]) {
			s.drawWhisker(c, xa.px(x), ser.Lo[j], ser.Hi[j], ya, col)
		}
		if ser.Markers {
			c.Circles = append(c.Circles, svgCircle{X: xa.px(x), Y: y, Fill: col, Tip: ser.Name + ": " + xf(x) + ", " + yf(ser.Y[j])})
		}
	}
	if d := pb.String(); d != "" {
		p := svgPath{D: d, Stroke: col, Tip: ser.Name}
		if ser.Dash {
			p.Class = "dash"
		}
		c.Paths = append(c.Paths, p)
	}
	if !ser.Markers {
		// points with no neighbour (gaps around them) are dots
		for _, pt := range pb.isolated {
			c.Circles = append(c.Circles, svgCircle{X: pt[0], Y: pt[1], Fill: col, Tip: ser.Name})
		}
	}
	if ser.Name != "" {
		c.Legend = append(c.Legend, legendItem{Color: col, Dash: ser.Dash, Label: ser.Name})
	}
}

// drawWhisker draws a vertical whisker with end caps at pixel x, from the
// value lov to hiv.
func (s *lineSpec) drawWhisker(c *chart, px, lov, hiv float64, ya axis, col string) {
	if !s.okY(lov) { // a low end of 0 on a log axis: down to the axis
		lov = ya.lo
	}
	lo, hi := ya.px(lov), ya.px(hiv)
	c.Lines = append(c.Lines,
		svgLine{X1: px, Y1: lo, X2: px, Y2: hi, Stroke: col, Class: "whisker"},
		svgLine{X1: px - 4, Y1: lo, X2: px + 4, Y2: lo, Stroke: col, Class: "whisker"},
		svgLine{X1: px - 4, Y1: hi, X2: px + 4, Y2: hi, Stroke: col, Class: "whisker"})
}

// barItem is one bar with an optional whisker from Lo to Hi.
type barItem struct {
	Label  string
	V      float64
	Lo, Hi float64 // NaN for no whisker
	Color  string
	Tip    string
}

// barSpec describes a horizontal bar chart: one labelled row per bar,
// which stays readable at phone width however many bars there are.
type barSpec struct {
	Title, Note string
	XLabel      string
	Fmt         func(float64) string // values
	TickFmt     func(float64) string // axis ticks (default fmtNum)
	Bars        []barItem
	RefX        []refLine
	Legend      []legendItem
}

const barRowH = 22.0

func (s *barSpec) render() chart {
	c := chart{Title: s.Title, Note: s.Note, W: chartW, Legend: s.Legend}
	if len(s.Bars) == 0 {
		c.Empty = "no data to draw"
		return c
	}
	f, tf := s.Fmt, s.TickFmt
	if f == nil {
		f = fmtNum
	}
	if tf == nil {
		tf = fmtNum
	}
	maxLabel := 0
	hi := 0.0
	for _, b := range s.Bars {
		maxLabel = max(maxLabel, utf8.RuneCountInString(b.Label))
		hi = math.Max(hi, b.V)
		if !math.IsNaN(b.Hi) {
			hi = math.Max(hi, b.Hi)
		}
	}
	for _, r := range s.RefX {
		hi = math.Max(hi, r.V)
	}
	labelW := math.Min(250, 12+6.6*float64(maxLabel))
	top := 8.0
	c.H = top + barRowH*float64(len(s.Bars)) + marginBot
	ticks, _, nhi := linearTicks(0, hi*1.12, 5)
	xa := axis{lo: 0, hi: nhi, p0: labelW, p1: chartW - marginRight - 8}
	plotBot := top + barRowH*float64(len(s.Bars))
	for _, v := range ticks {
		x := xa.px(v)
		c.Lines = append(c.Lines, svgLine{X1: x, Y1: top, X2: x, Y2: plotBot, Class: "grid"})
		c.Texts = append(c.Texts, svgText{X: x, Y: plotBot + 16, Anchor: "middle", Class: "tick", S: tf(v)})
	}
	c.Lines = append(c.Lines, svgLine{X1: xa.p0, Y1: top, X2: xa.p0, Y2: plotBot, Class: "axis"})
	for i, b := range s.Bars {
		col := b.Color
		if col == "" {
			col = color(0)
		}
		y := top + barRowH*float64(i)
		tip := b.Tip
		if tip == "" {
			tip = b.Label + ": " + f(b.V)
		}
		if !math.IsNaN(b.V) {
			c.Rects = append(c.Rects, svgRect{X: xa.p0, Y: y + 4, W: math.Max(0.5, xa.px(b.V)-xa.p0), H: barRowH - 8, Fill: col, Class: "bar", Tip: tip})
		}
		end := xa.px(math.Max(0, nanTo(b.V, 0)))
		if !math.IsNaN(b.Lo) && !math.IsNaN(b.Hi) {
			lo, hi, cy := xa.px(math.Max(b.Lo, 0)), xa.px(b.Hi), y+barRowH/2
			c.Lines = append(c.Lines,
				svgLine{X1: lo, Y1: cy, X2: hi, Y2: cy, Class: "whisker", Stroke: "#222"},
				svgLine{X1: lo, Y1: cy - 5, X2: lo, Y2: cy + 5, Class: "whisker", Stroke: "#222"},
				svgLine{X1: hi, Y1: cy - 5, X2: hi, Y2: cy + 5, Class: "whisker", Stroke: "#222"})
			end = math.Max(end, hi)
		}
		c.Texts = append(c.Texts,
			svgText{X: xa.p0 - 6, Y: y + barRowH/2 + 4, Anchor: "end", Class: "tick", S: truncRunes(b.Label, 38)},
			svgText{X: end + 4, Y: y + barRowH/2 + 4, Class: "tick", S: f(b.V)})
	}
	for _, r := range s.RefX {
		x := xa.px(r.V)
		c.Lines = append(c.Lines, svgLine{X1: x, Y1: top, X2: x, Y2: plotBot, Class: "ref"})
		lbl := svgText{X: x + 3, Y: plotBot - 3, Class: "reflbl", S: r.Label}
		if x > (xa.p0+xa.p1)/2 {
			lbl.X, lbl.Anchor = x-3, "end"
		}
		c.Texts = append(c.Texts, lbl)
	}
	if s.XLabel != "" {
		c.Texts = append(c.Texts, svgText{X: (xa.p0 + xa.p1) / 2, Y: c.H - 4, Anchor: "middle", Class: "lbl", S: s.XLabel})
	}
	return c
}

func nanTo(v, d float64) float64 {
	if math.IsNaN(v) {
		return d
	}
	return v
}

func truncRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
