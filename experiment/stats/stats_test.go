package stats

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Published two-sided critical values of Student's t (any statistics
// table, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
func TestTQuantileAgainstTables(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706},
		{0.975, 2, 4.303},
		{0.975, 4, 2.776},
		{0.975, 5, 2.571},
		{0.975, 10, 2.228},
		{0.975, 29, 2.045},
		{0.975, 30, 2.042},
		{0.975, 100, 1.984},
		{0.95, 10, 1.812},
		{0.95, 1, 6.314},
		{0.995, 10, 3.169},
		{0.995, 20, 2.845},
		{0.90, 3, 1.638},
		{0.999, 5, 5.893},
		{0.025, 10, -2.228},
	} {
		if got := TQuantile(tc.p, tc.df); !near(got, tc.want, 0.0006) {
			t.Errorf("t(%g, df=%g) = %.4f, want %.3f", tc.p, tc.df, got, tc.want)
		}
	}
	// Large df approaches the normal quantile 1.95996.
	if got := TQuantile(0.975, 1e6); !near(got, 1.95996, 1e-4) {
		t.Errorf("t(0.975, 1e6) = %v", got)
	}
	if got := TQuantile(0.5, 7); got != 0 {
		t.Errorf("median %v", got)
	}
	for _, bad := range [][2]float64{{1.5, 3}, {0.5, 0}, {math.NaN(), 3}} {
		if got := TQuantile(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("TQuantile(%v) = %v, want NaN", bad, got)
		}
	}
}

func TestTCDFAndBeta(t *testing.T) {
	t.Parallel()
	// df=1 is the Cauchy distribution: CDF(t) = 1/2 + atan(t)/pi.
	for _, x := range []float64{-10, -1, -0.3, 0, 0.5, 2, 40} {
		want := 0.5 + math.Atan(x)/math.Pi
		if got := TCDF(x, 1); !near(got, want, 1e-12) {
			t.Errorf("TCDF(%v, 1) = %v, want %v", x, got, want)
		}
	}
	// df=2 has a closed form: 1/2 + t / (2 sqrt(2 + t^2)).
	for _, x := range []float64{-3, -0.7, 0.1, 5} {
		want := 0.5 + x/(2*math.Sqrt(2+x*x))
		if got := TCDF(x, 2); !near(got, want, 1e-12) {
			t.Errorf("TCDF(%v, 2) = %v, want %v", x, got, want)
		}
	}
	// I_x(a, 1) = x^a and I_x(1, b) = 1 - (1-x)^b.
	for _, x := range []float64{0.01, 0.3, 0.77, 0.999} {
		if got := RegIncBeta(3.5, 1, x); !near(got, math.Pow(x, 3.5), 1e-12) {
			t.Errorf("I_%v(3.5,1) = %v", x, got)
		}
		if got := RegIncBeta(1, 2.5, x); !near(got, 1-math.Pow(1-x, 2.5), 1e-12) {
			t.Errorf("I_%v(1,2.5) = %v", x, got)
		}
	}
	if RegIncBeta(2, 3, 0) != 0 || RegIncBeta(2, 3, 1) != 1 {
		t.Error("bounds")
	}
}

// R's documented example: t.test(extra ~ group, data = sleep) gives
// t = -1.8608, df = 17.776, p-value = 0.07939 (Welch is R's default).
var sleep1 = []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
var sleep2 = []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}

func TestWelchPublishedExample(t *testing.T) {
	t.Parallel()
	w, err := WelchTest(sleep1, sleep2)
	if err != nil {
		t.Fatal(err)
	}
	if !near(w.T, -1.8608, 5e-5) || !near(w.DF, 17.776, 5e-4) || !near(w.P, 0.07939, 5e-6) {
		t.Errorf("Welch = %+v, want t=-1.8608 df=17.776 p=0.07939", w)
	}
	// R also prints the 95 % CI of each group's mean via t.test(x):
	// group 1: mean 0.75, CI [-0.5297804, 2.0297804].
	s := Summarize(sleep1)
	if !near(s.Mean, 0.75, 1e-12) || !near(*s.CILow, -0.5297804, 1e-6) || !near(*s.CIHigh, 2.0297804, 1e-6) {
		t.Errorf("CI of sleep group 1 = %+v [%v, %v]", s, *s.CILow, *s.CIHigh)
	}
	// Swapping the samples flips t and keeps p.
	w2, _ := WelchTest(sleep2, sleep1)
	if !near(w2.T, -w.T, 1e-12) || !near(w2.P, w.P, 1e-12) {
		t.Errorf("asymmetric: %+v vs %+v", w, w2)
	}
}

func TestSummarizeEdges(t *testing.T) {
	t.Parallel()
	if s := Summarize(nil); s.N != 0 || s.CILow != nil {
		t.Errorf("empty: %+v", s)
	}
	if s := Summarize([]float64{4}); s.Mean != 4 || s.CILow != nil || s.SD != 0 {
		t.Errorf("one value: %+v", s)
	}
	s := Summarize([]float64{10, 10, 10})
	if *s.CILow != 10 || *s.CIHigh != 10 || *s.CIHalfPct != 0 {
		t.Errorf("constant: %+v", s)
	}
	if s := Summarize([]float64{-1, 1}); s.CIHalfPct != nil {
		t.Errorf("zero mean has no relative half-width: %+v", s)
	}
}

func TestCompareVerdicts(t *testing.T) {
	t.Parallel()
	base := []float64{100, 102, 98, 101, 99}
	for _, tc := range []struct {
		name   string
		cand   []float64
		higher bool
		want   string
	}{
		{"faster throughput", []float64{120, 122, 119, 121, 118}, true, VerdictBetter},
		{"slower throughput", []float64{80, 82, 79, 81, 78}, true, VerdictWorse},
		{"higher latency", []float64{120, 122, 119, 121, 118}, false, VerdictWorse},
		{"lower latency", []float64{80, 82, 79, 81, 78}, false, VerdictBetter},
		{"same", []float64{101, 99, 100, 98, 102}, true, VerdictNoDifference},
		{"noisy", []float64{90, 130, 70, 140, 85}, true, VerdictNoDifference},
		{"one value", []float64{150}, true, VerdictInsufficient},
		{"constant equal", []float64{100, 100}, true, VerdictNoDifference},
	} {
		got, w := Compare(base, tc.cand, tc.higher)
		if got != tc.want {
			t.Errorf("%s: verdict %q (%+v), want %q", tc.name, got, w, tc.want)
		}
	}
	// Zero variance on both sides with different means: a certain difference.
	if v, w := Compare([]float64{5, 5}, []float64{7, 7}, true); v != VerdictBetter || w.P != 0 {
		t.Errorf("constant different: %s %+v", v, w)
	}
}

// The t distribution from gonum gives the figures the hand-written
// incomplete beta (continued fraction) and bisection gave before it, to
// 1e-9: every CI and p-value of earlier results stands.
func TestStatsMatchEarlierImplementation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ t, df, cdf, p float64 }{
		{-3.2, 1, 0.096411247979229481, 0.19282249595845896},
		{0.4, 2, 0.63608276348795445, 0.7278344730240911},
		{1.7, 2.5, 0.89719389142005801, 0.20561221715988393},
		{2.1, 4, 0.94817335684119897, 0.10365328631760215},
		{-0.8, 7.3, 0.22447865198033307, 0.44895730396066613},
		{2.5, 17.776, 0.98877769972474228, 0.022444600550515413},
		{1.96, 30, 0.9703288435519748, 0.05934231289605052},
		{-4, 58, 9.0859090529495201e-05, 0.0001817181810589904},
		{0.05, 1000, 0.51993381346401746, 0.96013237307196508},
	} {
		if got := TCDF(c.t, c.df); !near(got, c.cdf, 1e-9) {
			t.Errorf("TCDF(%v, %v) = %.17g, earlier %.17g", c.t, c.df, got, c.cdf)
		}
		if got := TwoSidedP(c.t, c.df); !near(got, c.p, 1e-9) {
			t.Errorf("TwoSidedP(%v, %v) = %.17g, earlier %.17g", c.t, c.df, got, c.p)
		}
	}
	for _, c := range []struct{ p, df, q float64 }{
		{0.975, 1, 12.706204736174612},
		{0.975, 2, 4.3026527297493971},
		{0.975, 4, 2.7764451051977943},
		{0.975, 9, 2.2621571627982604},
		{0.975, 29, 2.0452296421326963},
		{0.95, 3.7, 2.1824938039145678},
		{0.995, 12, 3.0545395893927605},
		{0.025, 6, -2.4469118511449182},
		{0.9, 100, 1.2900747613464745},
	} {
		if got := TQuantile(c.p, c.df); !near(got, c.q, 1e-9) {
			t.Errorf("TQuantile(%v, %v) = %.17g, earlier %.17g", c.p, c.df, got, c.q)
		}
	}
	for _, c := range []struct {
		a, b          []float64
		t, df, p      float64
		ciLow, ciHigh float64
	}{
		{sleep1, sleep2, -1.8608134674868526, 17.776473516178488, 0.079394140187358186, -0.52978041352626359, 2.0297804135262636},
		{[]float64{100, 102, 98, 101, 99}, []float64{120, 122, 119, 121, 118}, -20, 8, 4.0739183286749267e-08, 98.036756838522436, 101.96324316147756},
		{[]float64{1.2, 1.4, 1.1}, []float64{1.3, 1.25, 1.5, 1.45}, -1.3315427649795295, 3.721669701638886, 0.2587062428868564, 0.85387502997366305, 1.6127916366930033},
	} {
		w, err := WelchTest(c.a, c.b)
		if err != nil {
			t.Fatal(err)
		}
		if !near(w.T, c.t, 1e-9) || !near(w.DF, c.df, 1e-9) || !near(w.P, c.p, 1e-9) {
			t.Errorf("Welch(%v, %v) = %+v, earlier t=%v df=%v p=%v", c.a, c.b, w, c.t, c.df, c.p)
		}
		s := Summarize(c.a)
		if !near(*s.CILow, c.ciLow, 1e-9) || !near(*s.CIHigh, c.ciHigh, 1e-9) {
			t.Errorf("CI of %v = [%.17g, %.17g], earlier [%v, %v]", c.a, *s.CILow, *s.CIHigh, c.ciLow, c.ciHigh)
		}
	}
}
