package study

import (
	"strings"
	"testing"
)

// TestDecide: the verdict rule on synthetic results, one case per verdict
// and direction.
func TestDecide(t *testing.T) {
	t.Parallel()
	base := []float64{100, 102, 98, 101, 99}
	low := []float64{80, 82, 79, 81, 78}
	high := []float64{120, 122, 119, 121, 118}
	same := []float64{101, 99, 100, 98, 102}
	slightlyLow := []float64{99, 97, 101, 96, 100} // lower, not significant
	for _, c := range []struct {
		name     string
		f        Finding
		m, r     []float64
		want     string
		inReason string
	}{
		{"agrees, large, significant", Finding{Expect: Lower, Large: true}, low, base, Agrees, "significant"},
		{"agrees, higher", Finding{Expect: Higher, Large: true}, high, base, Agrees, "p = "},
		{"disagrees, opposite and significant", Finding{Expect: Lower, Large: true}, high, base, Disagrees, "opposite"},
		{"disagrees, small effect opposite", Finding{Expect: Higher}, low, base, Disagrees, "opposite"},
		{"not significant, large effect", Finding{Expect: Lower, Large: true}, slightlyLow, base, NotSignificant, "no significant difference"},
		{"not significant, opposite", Finding{Expect: Higher, Large: true}, slightlyLow, base, NotSignificant, ""},
		{"small effect, same direction", Finding{Expect: Lower}, slightlyLow, base, Agrees, "small"},
		{"same, none here", Finding{Expect: Same}, same, base, Agrees, "no significant difference"},
		{"same, a difference here", Finding{Expect: Same}, high, base, Disagrees, "where the study found none"},
		{"one run a side", Finding{Expect: Lower, Large: true}, []float64{80}, []float64{100}, NotSignificant, "at least two"},
		{"nothing measured", Finding{Expect: Lower}, nil, base, NotReproducible, "nothing measured"},
		{"not reproducible", Finding{NotReproducible: "no mongos here"}, low, base, NotReproducible, "no mongos"},
	} {
		o := Decide(&c.f, c.m, c.r)
		if o.Verdict != c.want || !strings.Contains(o.Reason, c.inReason) {
			t.Errorf("%s: %+v, want %q with %q", c.name, o, c.want, c.inReason)
		}
	}
	o := Decide(&Finding{Expect: Lower, Large: true}, low, base)
	if o.Ratio == nil || *o.Ratio < 0.79 || *o.Ratio > 0.81 || o.Direction != Lower || o.P == nil || *o.P >= 0.05 {
		t.Errorf("ratio, direction and p of a clear case: %+v", o)
	}
}
