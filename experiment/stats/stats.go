// Package stats is the statistics of experiments over repeated runs: the
// mean, sample standard deviation and Student-t confidence interval of a
// sample, Welch's unequal-variance t-test, and the verdict of a candidate
// against a baseline. The t distribution (CDF, survival, quantiles) is
// gonum's stat/distuv, checked against published tables and R's t.test in
// the tests.
package stats

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/scalelab/scalelab/results"
)

// Confidence is the level of every interval and test (95 %, tests at 5 %).
const Confidence = 0.95

// Alpha is the significance level of the comparisons.
const Alpha = 1 - Confidence

// Summarize computes a Stat of xs at the 95 % level.
func Summarize(xs []float64) results.Stat {
	s := results.Stat{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	s.Mean, s.SD = meanSD(xs)
	if len(xs) < 2 {
		return s
	}
	half := TQuantile(1-Alpha/2, float64(len(xs)-1)) * s.SD / math.Sqrt(float64(len(xs)))
	lo, hi := s.Mean-half, s.Mean+half
	s.CILow, s.CIHigh = &lo, &hi
	if s.Mean != 0 {
		p := 100 * half / math.Abs(s.Mean)
		s.CIHalfPct = &p
	}
	return s
}

// meanSD returns the mean and the sample standard deviation (n-1).
func meanSD(xs []float64) (float64, float64) {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	m := sum / float64(len(xs))
	if len(xs) < 2 {
		return m, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

// Welch is the outcome of Welch's two-sample t-test.
type Welch struct {
	T  float64 // t statistic of mean(a) - mean(b)
	DF float64 // Welch-Satterthwaite degrees of freedom
	P  float64 // two-sided p-value
}

// ErrTooFew means a sample has fewer than two values: no variance, no test.
var ErrTooFew = errors.New("a t-test needs at least two values per sample")

// WelchTest runs Welch's unequal-variance t-test of mean(a) = mean(b).
// When both samples have zero variance the test degenerates: p is 1 for
// equal means and 0 otherwise (a difference without any noise).
func WelchTest(a, b []float64) (Welch, error) {
	if len(a) < 2 || len(b) < 2 {
		return Welch{}, ErrTooFew
	}
	ma, sa := meanSD(a)
	mb, sb := meanSD(b)
	va, vb := sa*sa/float64(len(a)), sb*sb/float64(len(b))
	se := math.Sqrt(va + vb)
	if se == 0 {
		if ma == mb {
			return Welch{T: 0, DF: float64(len(a) + len(b) - 2), P: 1}, nil
		}
		return Welch{T: math.Copysign(math.Inf(1), ma-mb), DF: float64(len(a) + len(b) - 2), P: 0}, nil
	}
	t := (ma - mb) / se
	df := (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	return Welch{T: t, DF: df, P: TwoSidedP(t, df)}, nil
}

// student is Student's t distribution with df degrees of freedom.
func student(df float64) distuv.StudentsT { return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df} }

// TwoSidedP is P(|T| >= |t|) for Student's t with df degrees of freedom.
func TwoSidedP(t, df float64) float64 {
	if math.IsInf(t, 0) {
		return 0
	}
	return 2 * student(df).Survival(math.Abs(t))
}

// TCDF is the cumulative distribution function of Student's t with df > 0
// degrees of freedom.
func TCDF(t, df float64) float64 {
	if math.IsInf(t, 1) {
		return 1
	}
	if math.IsInf(t, -1) {
		return 0
	}
	return student(df).CDF(t)
}

// TQuantile returns t such that TCDF(t, df) = p, for p in (0, 1) and
// df > 0; NaN for p or df outside, -Inf and +Inf at p = 0 and 1.
func TQuantile(p, df float64) float64 {
	switch {
	case math.IsNaN(p) || math.IsNaN(df) || df <= 0 || p <= 0 || p >= 1:
		if p == 0 {
			return math.Inf(-1)
		}
		if p == 1 {
			return math.Inf(1)
		}
		return math.NaN()
	case p == 0.5:
		return 0
	}
	return student(df).Quantile(p)
}

// RegIncBeta is the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and x in [0, 1].
func RegIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	return mathext.RegIncBeta(a, b, x)
}

// Verdicts of a comparison with the baseline.
const (
	VerdictBaseline     = "baseline"
	VerdictBetter       = "better"
	VerdictWorse        = "worse"
	VerdictNoDifference = "no significant difference"
	VerdictInsufficient = "insufficient data" // fewer than two values on a side
)

// Compare tests a candidate sample against a baseline sample with Welch's
// test at the 5 % level. higherIsBetter says which way is better (true for
// throughput, false for latencies and error rates). It returns the verdict
// and the test (nil when there are fewer than two values on a side).
func Compare(baseline, candidate []float64, higherIsBetter bool) (string, *Welch) {
	w, err := WelchTest(candidate, baseline)
	if err != nil {
		return VerdictInsufficient, nil
	}
	if w.P >= Alpha || w.T == 0 {
		return VerdictNoDifference, &w
	}
	if (w.T > 0) == higherIsBetter {
		return VerdictBetter, &w
	}
	return VerdictWorse, &w
}
