package results

import (
	"strings"
	"testing"
)

func phase(label string, from float64, n, errs int64, mean float64) PhaseFigures {
	p := PhaseFigures{Phase: label, FromS: from, ToS: from + 30, Requests: n, Errors: errs}
	if n > 0 {
		p.ErrorPct = 100 * float64(errs) / float64(n)
		p.MeanMs = &mean
	}
	return p
}

// TestFindBreak: the first phase whose error rate passes the rule's or
// whose mean passes the factor times the first phase's breaks; a rate
// exactly at the limit does not; an empty phase neither breaks nor is the
// baseline.
func TestFindBreak(t *testing.T) {
	rule := BreakRule{ErrorPct: 1, MeanFactor: 5}
	for _, c := range []struct {
		name   string
		phases []PhaseFigures
		index  int // 0: no break
		reason string
		factor float64 // the last phase's mean factor
	}{
		{"errors", []PhaseFigures{phase("30s@1/s", 0, 300, 0, 20), phase("30s@2/s", 30, 600, 0, 22), phase("30s@4/s", 60, 1200, 12, 40), phase("30s@8/s", 90, 2000, 240, 90)},
			4, "12.0% of its requests failed (over 1%)", 4.5},
		{"exactly 1% holds", []PhaseFigures{phase("a", 0, 100, 0, 20), phase("b", 30, 100, 1, 20)}, 0, "", 1},
		{"mean", []PhaseFigures{phase("a", 0, 300, 0, 20), phase("b", 30, 600, 0, 60), phase("c", 60, 900, 0, 101), phase("d", 90, 900, 90, 300)},
			3, "its mean duration 101 ms is 5.0 times the first phase's 20.0 ms (over 5)", 15},
		{"both", []PhaseFigures{phase("a", 0, 300, 0, 10), phase("b", 30, 600, 30, 200)}, 2, "5.0% of its requests failed (over 1%) and its mean duration 200 ms is 20.0 times", 20},
		{"the first phase itself", []PhaseFigures{phase("a", 0, 100, 50, 10)}, 1, "50.0% of its requests failed", 1},
		{"empty first phase", []PhaseFigures{phase("a", 0, 0, 0, 0), phase("b", 30, 100, 0, 10), phase("c", 60, 100, 0, 49)}, 0, "", 4.9},
		{"none", []PhaseFigures{phase("a", 0, 300, 0, 20), phase("b", 30, 600, 0, 21)}, 0, "", 1.05},
		{"a baseline of few requests is said", []PhaseFigures{phase("a", 0, 3, 0, 10), phase("b", 3, 6, 0, 66)}, 2, "6.6 times the first phase's 10.0 ms (over 5, a mean of 3 requests)", 6.6},
	} {
		b := FindBreak(c.phases, rule)
		switch {
		case c.index == 0 && b != nil:
			t.Errorf("%s: break %+v, want none", c.name, b)
		case c.index != 0 && b == nil:
			t.Errorf("%s: no break, want phase %d", c.name, c.index)
		case b != nil && (b.Index != c.index || b.Phase != c.phases[c.index-1].Phase || b.FromS != c.phases[c.index-1].FromS || !strings.Contains(b.Reason, c.reason)):
			t.Errorf("%s: break %+v, want phase %d: %q", c.name, b, c.index, c.reason)
		}
		last := c.phases[len(c.phases)-1]
		if last.MeanFactor == nil || *last.MeanFactor < c.factor-1e-9 || *last.MeanFactor > c.factor+1e-9 {
			t.Errorf("%s: the last phase's mean factor %v, want %g", c.name, last.MeanFactor, c.factor)
		}
	}
}
