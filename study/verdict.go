package study

import (
	"fmt"
	"math"

	"github.com/scalelab/scalelab/experiment/stats"
)

// Verdicts of a finding.
const (
	Agrees          = "agrees"
	Disagrees       = "disagrees"
	NotSignificant  = "not significant here"
	NotReproducible = "not reproducible here"
	// Interrupted is the outcome of a finding whose experiment the user
	// stopped (the study was interrupted in it or before it ran): nothing
	// was measured, and that says nothing about this machine.
	Interrupted = "not measured: interrupted"
)

// Outcome is a finding's verdict from the measured values.
type Outcome struct {
	Verdict string `json:"verdict"`
	// Reason says why, in words (the test, or why nothing was measured).
	Reason string `json:"reason"`
	// Direction is what scalelab measured: higher, lower or same
	// (equal means).
	Direction string `json:"direction,omitempty"`
	// Ratio is mean(measure) / mean(reference); nil when the reference
	// mean is 0 or nothing was measured.
	Ratio *float64 `json:"ratio,omitempty"`
	// P is Welch's two-sided p-value; nil without a test.
	P *float64 `json:"p,omitempty"`
}

// Decide applies the verdict rule to a finding's measured values (one per
// run) and its reference's:
//
//   - agrees: the direction the study found, significant by Welch's test
//     at the 5 % level where the study's effect was large (Large); where
//     it was small, the same direction suffices. For a study that found no
//     difference (Same), agrees when Welch's test finds none either;
//   - disagrees: significant in the opposite direction (for Same: any
//     significant difference);
//   - not significant here: neither (fewer than two runs a side included);
//   - not reproducible here: the study file says why, or nothing was
//     measured.
//
// A finding whose experiment was interrupted is not decided here: Build
// gives it the outcome Interrupted.
func Decide(f *Finding, measure, reference []float64) Outcome {
	if f.NotReproducible != "" {
		return Outcome{Verdict: NotReproducible, Reason: f.NotReproducible}
	}
	if len(measure) == 0 || len(reference) == 0 {
		return Outcome{Verdict: NotReproducible, Reason: fmt.Sprintf("nothing measured (%d runs of the measure, %d of the reference)", len(measure), len(reference))}
	}
	m, r := mean(measure), mean(reference)
	o := Outcome{Direction: Same}
	switch {
	case m > r:
		o.Direction = Higher
	case m < r:
		o.Direction = Lower
	}
	if r != 0 {
		ratio := m / r
		o.Ratio = &ratio
	}
	w, err := stats.WelchTest(measure, reference)
	if err != nil {
		o.Verdict = NotSignificant
		o.Reason = fmt.Sprintf("%d and %d runs: Welch's test needs at least two a side", len(measure), len(reference))
		if f.Expect != Same && !f.Large && o.Direction == f.Expect {
			o.Verdict = Agrees
			o.Reason += "; the study's effect was small and the direction is the same"
		}
		return o
	}
	p := w.P
	o.P = &p
	sig := w.P < stats.Alpha && w.T != 0 && o.Direction != Same
	test := fmt.Sprintf("Welch's t = %.2f, df = %.1f, p = %s", w.T, w.DF, formatP(w.P))
	switch {
	case f.Expect == Same && !sig:
		o.Verdict, o.Reason = Agrees, "no significant difference, as the study found ("+test+")"
	case f.Expect == Same:
		o.Verdict, o.Reason = Disagrees, "a significant difference where the study found none ("+test+")"
	case sig && o.Direction == f.Expect:
		o.Verdict, o.Reason = Agrees, "the study's direction, significant ("+test+")"
	case sig:
		o.Verdict, o.Reason = Disagrees, "the opposite direction, significant ("+test+")"
	case !f.Large && o.Direction == f.Expect:
		o.Verdict, o.Reason = Agrees, "the study's direction; its effect was small, and not significant here ("+test+")"
	default:
		o.Verdict, o.Reason = NotSignificant, "no significant difference where the study found one ("+test+")"
	}
	return o
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// formatP prints a p-value with the digits that matter.
func formatP(p float64) string {
	switch {
	case p < 0.0001:
		return "< 0.0001"
	case math.IsNaN(p):
		return "n/a"
	}
	return fmt.Sprintf("%.4f", p)
}
