package experiment

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/slo"
)

// matrixGroup runs a group's combinations with the repeat rule, in the
// file's order.
func (x *executor) matrixGroup(ctx context.Context, g group, names map[string]ClusterNames) error {
	attempts := x.attempts
	x.remaining = func() int {
		n := 0
		for ci := range x.combos {
			n += x.expected(ci, attempts)
		}
		return n
	}
	if x.s.Repeats.Fixed == 0 {
		x.upTo = func() int { return x.most(attempts) }
	}
	one := func(ci int) error {
		attempts[ci]++
		return x.runRepeat(ctx, ci, attempts[ci], names[groupKey(x.combos[ci])])
	}
	if x.s.Order == OrderGrouped {
		for _, ci := range g.combos {
			for !x.done(ci, attempts[ci]) {
				if err := one(ci); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for {
		var active []int
		for _, ci := range g.combos {
			if !x.done(ci, attempts[ci]) {
				active = append(active, ci)
			}
		}
		if len(active) == 0 {
			return nil
		}
		if x.s.Order == OrderRandomized {
			x.rng.Shuffle(len(active), func(i, j int) { active[i], active[j] = active[j], active[i] })
		}
		for _, ci := range active {
			if err := one(ci); err != nil {
				return err
			}
		}
	}
}

// ruleValues are the values the repeat rule watches.
func (x *executor) ruleValues(ci int) []float64 {
	r := x.s.Repeats
	op := r.Op
	if op == "" {
		op = slo.AllOps
	}
	return values(x.tables[ci], op, r.Metric)
}

// done applies the repeat rule to a combination after n attempts.
func (x *executor) done(ci, n int) bool {
	r := x.s.Repeats
	if r.Fixed > 0 {
		return n >= r.Fixed
	}
	if n >= r.Max {
		return true
	}
	vs := x.ruleValues(ci)
	if len(vs) < r.Min {
		return false
	}
	st := stats.Summarize(vs)
	return st.CIHalfPct != nil && *st.CIHalfPct <= 100*r.UntilCIWithin
}

// expected estimates the runs a combination still needs. For an adaptive
// rule it projects the CI so far: its half-width shrinks as 1/sqrt(n), so
// n*(ci/target)^2 values reach the target (an over-estimate, as Student's
// t shrinks too), at least min, at most max attempts.
func (x *executor) expected(ci int, attempts map[int]int) int {
	r := x.s.Repeats
	n := attempts[ci]
	if r.Fixed > 0 {
		return max(r.Fixed-n, 0)
	}
	if x.done(ci, n) {
		return 0
	}
	vs := x.ruleValues(ci)
	need := r.Min
	if st := stats.Summarize(vs); st.CIHalfPct != nil && r.UntilCIWithin > 0 {
		ratio := *st.CIHalfPct / (100 * r.UntilCIWithin)
		need = max(need, int(math.Ceil(float64(len(vs))*ratio*ratio)))
	}
	return max(min(need-len(vs), r.Max-n), 1)
}

// most is the runs the combinations could still take at most (the
// adaptive rule's max), for the ETA's upper bound.
func (x *executor) most(attempts map[int]int) int {
	r := x.s.Repeats
	n := 0
	for ci := range x.combos {
		if r.Fixed > 0 {
			n += max(r.Fixed-attempts[ci], 0)
		} else if !x.done(ci, attempts[ci]) {
			n += max(r.Max-attempts[ci], 0)
		}
	}
	return n
}

// runRepeat runs one repeat of a combination and records it.
func (x *executor) runRepeat(ctx context.Context, ci, repeat int, names ClusterNames) error {
	c := x.combos[ci]
	dir := filepath.Join(results.RunsDir, fmt.Sprintf("%s-r%02d", c.ID, repeat))
	opts := x.s.RunOptions(c, repeat, filepath.Join(x.dir, dir), names)
	x.progressStart(c, fmt.Sprintf("repeat %s", x.repeatText(ci, repeat)))
	ref, table, err := x.execute(ctx, opts, dir, repeat)
	if err != nil {
		return err
	}
	cr := &x.res.Combinations[ci]
	cr.Runs = append(cr.Runs, ref)
	if table != nil {
		x.tables[ci] = append(x.tables[ci], table)
	}
	x.progressDone(ref, x.ruleText(ci))
	return x.save()
}

// repeatText is which repeat this is, of how many.
func (x *executor) repeatText(ci, repeat int) string {
	r := x.s.Repeats
	if r.Fixed > 0 {
		return fmt.Sprintf("%d/%d", repeat, r.Fixed)
	}
	return fmt.Sprintf("%d (%d-%d)", repeat, r.Min, r.Max)
}

// ruleText shows the adaptive rule's progress.
func (x *executor) ruleText(ci int) string {
	r := x.s.Repeats
	if r.Fixed > 0 {
		return ""
	}
	st := stats.Summarize(x.ruleValues(ci))
	if st.CIHalfPct == nil {
		return ""
	}
	return fmt.Sprintf(", CI ±%.1f%% (target %g%%)", *st.CIHalfPct, 100*r.UntilCIWithin)
}
