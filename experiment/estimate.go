package experiment

import (
	"fmt"
	"time"

	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/runner"
)

// Estimate is what an experiment will take, known before it runs: its
// run count and the time its runs measure. Loading data and starting
// clusters come on top.
type Estimate struct {
	Runs, MaxRuns int           // runs (MaxRuns > Runs with adaptive repeats)
	Load, MaxLoad time.Duration // time the runs measure (a run's duration, or its phases)
	ByOps         int           // runs bounded by operations: their time depends on the rate
	Clusters      int           // local clusters started
	Knee          bool          // a knee search: the runs depend on where the SLO breaks
	Combinations  int
}

// Estimate counts the runs of a validated file (repeats > 0 overrides the
// file's rule, as `--repeats` does) and the time they measure. A file
// with a search counts its knee search's runs per load step.
func (s *Spec) Estimate(repeats int) (Estimate, error) {
	if s.Search != nil {
		sr, err := s.searchFor(&Search{Repeats: repeats})
		if err != nil {
			return Estimate{}, err
		}
		return s.EstimateSearch(sr)
	}
	lo, hi := s.Repeats.Min, s.Repeats.Max
	switch {
	case repeats > 0:
		lo, hi = repeats, repeats
	case s.Repeats.Fixed > 0:
		lo, hi = s.Repeats.Fixed, s.Repeats.Fixed
	}
	return s.estimate(lo, hi, false)
}

// EstimateSearch counts the runs of one load step of a knee search (from
// KneeSearch) over every combination and the time they measure.
func (s *Spec) EstimateSearch(sr Search) (Estimate, error) {
	return s.estimate(sr.Repeats, sr.Repeats, true)
}

// KneeSearch is the knee search the experiment runs: the file's search:
// with o's non-zero fields (the flags of `experiment knee`) over it, and
// defaults for what neither gives (repeats: the file's repeat count).
func (s *Spec) KneeSearch(o *Search) (Search, error) { return s.searchFor(o) }

// estimate counts lo to hi runs per combination.
func (s *Spec) estimate(lo, hi int, knee bool) (Estimate, error) {
	combos, err := s.Matrix()
	if err != nil {
		return Estimate{}, err
	}
	e := Estimate{Knee: knee}
	e.Combinations = len(combos)
	for _, c := range combos {
		d, byOps := runLength(s.RunOptions(c, 1, "", ClusterNames{}))
		e.Runs += lo
		e.MaxRuns += hi
		if byOps {
			e.ByOps += hi
		}
		e.Load += time.Duration(lo) * d
		e.MaxLoad += time.Duration(hi) * d
	}
	for _, g := range groups(combos) {
		for _, cs := range []*ClusterSpec{g.cache, g.spec, g.app} {
			if cs != nil {
				e.Clusters++
			}
		}
	}
	return e, nil
}

// runLength is how long one run of c measures as the runner resolves it
// (runner.NewPlan): its duration, its phases' total, the default duration
// when nothing bounds it, and 0 with byOps when only --ops does.
func runLength(o *runner.Options) (time.Duration, bool) {
	switch {
	case o.Duration > 0:
		return o.Duration, false
	case o.Phases != "":
		if ph, err := load.ParsePhases(o.Phases); err == nil {
			return (&load.Phases{Phases: ph}).Total(), false
		}
	case o.Ops > 0:
		return 0, true
	}
	return load.DefaultDuration, false
}

// String is "8 runs, about 1m20s of load, plus loading data" or, with adaptive repeats, "6
// to 20 runs, about 1m0s to 3m20s of load", plus what the figure leaves
// out.
func (e Estimate) String() string {
	s := fmt.Sprintf("%d runs, about %s of load", e.Runs, e.Load)
	if e.MaxRuns > e.Runs {
		s = fmt.Sprintf("%d to %d runs, about %s to %s of load", e.Runs, e.MaxRuns, e.Load, e.MaxLoad)
	}
	if e.Knee {
		s = fmt.Sprintf("a knee search of %s: %s per load step, about %s of load per step; the steps depend on where the SLO breaks", plural(e.Combinations, "combination"), plural(e.Runs, "run"), e.Load)
	}
	if e.ByOps > 0 {
		s += fmt.Sprintf(" (%d runs are bounded by operations: their time depends on the rate)", e.ByOps)
	}
	s += ", plus loading data"
	if e.Clusters > 0 {
		s += " and starting " + plural(e.Clusters, "local cluster")
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
