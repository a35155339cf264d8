package experiment

import (
	"errors"
	"math"

	"github.com/scalelab/scalelab/results"
)

// Statistics over repeats: mean, sample standard deviation, Student-t
// confidence intervals and Welch's unequal-variance t-test. The t
// distribution's CDF is computed from the regularized incomplete beta
// function (continued fraction, modified Lentz), and its quantiles by
// bisection on the CDF; both are checked against published tables.

// Stat summarises one metric over repeats (package results).
type Stat = results.Stat

// Confidence is the level of every interval and test (95 %, tests at 5 %).
const Confidence = 0.95

// Alpha is the significance level of the comparisons.
const Alpha = 1 - Confidence

// Summarize computes a Stat of xs at the 95 % level.
func Summarize(xs []float64) Stat {
	s := Stat{N: len(xs)}
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

// TwoSidedP is P(|T| >= |t|) for Student's t with df degrees of freedom.
func TwoSidedP(t, df float64) float64 {
	if math.IsInf(t, 0) {
		return 0
	}
	x := df / (df + t*t)
	return RegIncBeta(df/2, 0.5, x)
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
	tail := 0.5 * RegIncBeta(df/2, 0.5, df/(df+t*t))
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// TQuantile returns t such that TCDF(t, df) = p, for p in (0, 1) and
// df > 0 (bisection to double precision).
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
	lo, hi := -1.0, 1.0
	for TCDF(lo, df) > p {
		lo *= 2
	}
	for TCDF(hi, df) < p {
		hi *= 2
	}
	for i := 0; i < 200 && hi-lo > 1e-13*math.Max(1, math.Abs(lo)); i++ {
		mid := (lo + hi) / 2
		if TCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
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
	lbeta := lgamma(a+b) - lgamma(a) - lgamma(b)
	front := math.Exp(lbeta + a*math.Log(x) + b*math.Log1p(-x))
	// The continued fraction converges fast for x < (a+1)/(a+b+2); use
	// the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) elsewhere.
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// betaCF evaluates the continued fraction of the incomplete beta function
// by the modified Lentz method.
func betaCF(a, b, x float64) float64 {
	const (
		tiny = 1e-300
		eps  = 1e-15
	)
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c := 1.0
	d := 1 / guard(1-(a+b)*x/(a+1))
	h := d
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		// Even step.
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 / guard(1+num*d)
		c = guard(1 + num/c)
		h *= d * c
		// Odd step.
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 / guard(1+num*d)
		c = guard(1 + num/c)
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// Verdicts of a comparison with the baseline.
const (
	VerdictBaseline      = "baseline"
	VerdictBetter        = "better"
	VerdictWorse         = "worse"
	VerdictNoDifference  = "no significant difference"
	VerdictInsufficient  = "insufficient data" // fewer than two values on a side
	verdictUndefinedNote = "a t-test needs at least two repeats on each side"
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
