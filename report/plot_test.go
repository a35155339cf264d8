package report

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestTicks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lo, hi  float64
		want    []float64
		log     bool
		wantLog []float64
	}{
		{lo: 0, hi: 97, want: []float64{0, 20, 40, 60, 80, 100}},
		{lo: 0, hi: 1, want: []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{lo: 3, hi: 3, want: []float64{3, 3.2, 3.4, 3.6, 3.8, 4}},
		{lo: 0.3, hi: 4000, log: true, wantLog: []float64{0.1, 1, 10, 100, 1000, 10000}},
		{lo: 2, hi: 30, log: true, wantLog: []float64{1, 2, 5, 10, 20, 50, 100}},
	} {
		if tc.log {
			got, _, _ := logTicks(tc.lo, tc.hi)
			if !approxEqual(got, tc.wantLog) {
				t.Errorf("logTicks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.wantLog)
			}
			continue
		}
		got, _, _ := linearTicks(tc.lo, tc.hi, 5)
		if !approxEqual(got, tc.want) {
			t.Errorf("linearTicks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func approxEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*math.Max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}

func TestFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got, want string
	}{
		{fmtNum(0), "0"}, {fmtNum(1234), "1234"}, {fmtNum(12345), "12.3k"}, {fmtNum(2.5e6), "2.5M"}, {fmtNum(0.0123), "0.0123"},
		{fmtNum(math.NaN()), "-"}, {fmtNum(1.5), "1.5"},
		{fmtMsAxis(0.1), "100 µs"}, {fmtMsAxis(1), "1 ms"}, {fmtMsAxis(2500), "2.5 s"}, {fmtMsAxis(0.0005), "500 ns"},
		{fmtPct(0.0123), "1.23%"}, {fmtPct(0), "0%"}, {fmtPct(math.NaN()), "-"},
		{fmtDuration(59.94), "59.9 s"}, {fmtDuration(3600), "1h0m0s"},
		{truncRunes("abcdef", 4), "abc…"}, {truncRunes("ab", 4), "ab"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestLineChart(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	spec := lineSpec{Title: "t", LogY: true, RefY: limits, Bands: []band{{0, 2, "warm-up"}},
		Series: []lineSeries{
			{Name: "a", X: []float64{1, 2, 3, 4}, Y: []float64{1, nan, 3, 4}},
			{Name: "b", X: []float64{1, 2}, Y: []float64{0, 5}}, // 0 cannot be drawn on a log scale
		}}
	c := spec.render()
	// a: the NaN breaks the line; the lone first point becomes a dot and
	// only the run 3-4 is a path. b: 0 cannot be drawn on a log scale, so
	// its one point is a dot.
	if c.Empty != "" || len(c.Paths) != 1 || len(c.Circles) != 2 || len(c.Legend) != 2 || len(c.Rects) != 1 {
		t.Fatalf("chart %+v", c)
	}
	if d := c.Paths[0].D; strings.Count(d, "M") != 1 || strings.Count(d, "L") != 1 {
		t.Errorf("a NaN must break the line: %q", d)
	}
	for _, p := range c.Paths {
		if strings.Contains(p.D, "NaN") || strings.Contains(p.D, "Inf") {
			t.Errorf("bad path %q", p.D)
		}
	}
	var refs []string
	for _, tx := range c.Texts {
		if tx.Class == "reflbl" {
			refs = append(refs, tx.S)
		}
	}
	if !reflect.DeepEqual(refs, []string{"0.1 s", "1 s", "10 s"}) {
		t.Errorf("reference lines %v", refs)
	}
	if empty := (&lineSpec{Title: "e", Series: []lineSeries{{X: []float64{1}, Y: []float64{nan}}}}).render(); empty.Empty == "" {
		t.Error("a chart without points must say so")
	}
}

func TestBarChart(t *testing.T) {
	t.Parallel()
	c := (&barSpec{Title: "b", Bars: []barItem{{Label: "one", V: 10, Lo: 8, Hi: 12}, {Label: "two", V: 5, Lo: nan(), Hi: nan()}},
		RefX: []refLine{{V: 11, Label: "SLO"}}}).render()
	if len(c.Rects) != 2 || c.H <= 0 || c.Empty != "" {
		t.Fatalf("chart %+v", c)
	}
	whiskers := 0
	for _, l := range c.Lines {
		if l.Class == "whisker" {
			whiskers++
		}
	}
	if whiskers != 3 {
		t.Errorf("%d whisker lines, want 3 (one bar with a CI)", whiskers)
	}
	if (&barSpec{}).render().Empty == "" {
		t.Error("no bars must say so")
	}
}

func nan() float64 { return math.NaN() }
