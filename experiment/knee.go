package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/slo"
)

// Knee, KneeStep and StepFigure are the knee search's part of
// experiment.json (package results).
type (
	Knee       = results.Knee
	KneeStep   = results.KneeStep
	StepFigure = results.StepFigure
)

// searchFor completes a search from the file, flags and defaults.
func (s *Spec) searchFor(o *Search) (Search, error) {
	sr := Search{Precision: 0.1}
	if s.Search != nil {
		sr = *s.Search
	}
	if o != nil {
		if o.On != "" {
			sr.On = o.On
		}
		if o.Start > 0 {
			sr.Start = o.Start
		}
		if o.Max > 0 {
			sr.Max = o.Max
		}
		if o.Precision > 0 {
			sr.Precision = o.Precision
		}
		if o.Repeats > 0 {
			sr.Repeats = o.Repeats
		}
	}
	given := map[string]string{}
	for _, a := range s.Load {
		given[a.Key] = a.Value
	}
	if sr.On == "" {
		sr.On = "users"
		if given["model"] == load.ModelRate || (given["model"] == "" && given["rate"] != "") {
			sr.On = "rate"
		}
	}
	if sr.On != "users" && sr.On != "rate" {
		return sr, fmt.Errorf("knee search on %q; allowed: users|rate", sr.On)
	}
	if sr.Start == 0 {
		sr.Start = 1
		if v, err := strconv.Atoi(given["users"]); err == nil && sr.On == "users" {
			sr.Start = float64(v)
		}
		if sr.On == "rate" {
			sr.Start = 100
		}
	}
	if sr.On == "users" {
		sr.Start = math.Max(1, math.Round(sr.Start))
	}
	if sr.Max == 0 {
		sr.Max = math.Max(1024, sr.Start)
		if sr.On == "rate" {
			sr.Max = sr.Start * 1024
		}
	}
	if sr.Start > sr.Max {
		return sr, fmt.Errorf("knee search: start %g is above max %g", sr.Start, sr.Max)
	}
	if sr.Repeats == 0 {
		sr.Repeats = s.Repeats.Fixed
		if sr.Repeats == 0 {
			sr.Repeats = s.Repeats.Min
		}
	}
	if len(s.SLO) == 0 {
		return sr, fmt.Errorf("a knee search needs an SLO to find where it breaks: `slo:` in the file or --slo 'p95<1s'")
	}
	for _, f := range s.Factors {
		if f.Name == sr.On {
			return sr, fmt.Errorf("the knee search varies %s itself; it cannot be a factor too", sr.On)
		}
	}
	return sr, nil
}

// applySearchLoad sets a step's load in a run's options.
func applySearchLoad(o *runner.Options, on string, load float64) {
	switch on {
	case "users":
		o.Users = int(load)
		o.Given["users"] = true
	case "rate":
		o.Rate = strconv.FormatFloat(load, 'f', -1, 64) + "/s"
		o.Given["rate"] = true
	}
	o.Args = commandLine(o)
}

// kneeGroup searches the knee of each of a group's combinations in turn.
func (x *executor) kneeGroup(ctx context.Context, g group, names map[string]ClusterNames, sr Search) error {
	for _, ci := range g.combos {
		if err := x.knee(ctx, ci, names[groupKey(x.combos[ci])], sr); err != nil {
			return err
		}
	}
	return nil
}

// kneeSearch is one combination's knee search under way.
type kneeSearch struct {
	x     *executor
	ci    int
	c     *Combination
	names ClusterNames
	sr    Search
	k     *Knee                 // in the result, filled as steps end
	steps map[float64]*KneeStep // by load
}

// knee searches one combination: the load doubles from Start until the
// SLO breaks (or halves until it holds), then bisects the bracket.
func (x *executor) knee(ctx context.Context, ci int, names ClusterNames, sr Search) error {
	c := x.combos[ci]
	x.res.Knees = append(x.res.Knees, Knee{Combination: c.ID, Label: c.Label, On: sr.On, Start: sr.Start, Max: sr.Max, Precision: sr.Precision, Repeats: sr.Repeats})
	ks := &kneeSearch{x: x, ci: ci, c: c, names: names, sr: sr, k: &x.res.Knees[len(x.res.Knees)-1], steps: map[float64]*KneeStep{}}
	lo, hi, err := bracket(sr, func(load float64) (stepVerdict, error) { return ks.step(ctx, load) })
	if err != nil {
		return err
	}
	ks.conclude(lo, hi)
	fmt.Fprintf(x.o.Stderr, "%s %s: %s\n", c.ID, c.Label, ks.k.Summary)
	return x.save()
}

// stepVerdict is what a knee step says of the SLO.
type stepVerdict int

const (
	stepBreaks     stepVerdict = iota // a figure broke it, or a run was not measured
	stepMeets                         // every figure met it
	stepFewSamples                    // the runs had too few samples for a figure it needs
)

// verdictOf is a judged step's verdict.
func verdictOf(st *KneeStep) stepVerdict {
	switch {
	case st.Pass:
		return stepMeets
	case st.TooFewSamples:
		return stepFewSamples
	}
	return stepBreaks
}

// step runs a load's repeats (once per load) and says whether it meets
// the SLO.
func (ks *kneeSearch) step(ctx context.Context, load float64) (stepVerdict, error) {
	if st, ok := ks.steps[load]; ok {
		return verdictOf(st), nil
	}
	x, c, sr := ks.x, ks.c, ks.sr
	st := &KneeStep{Load: load, Order: len(ks.steps) + 1}
	ks.steps[load] = st
	var tables []slo.Table
	for r := 1; r <= sr.Repeats; r++ {
		dir := filepath.Join(results.RunsDir, fmt.Sprintf("%s-%s%s-r%02d", c.ID, sr.On, strconv.FormatFloat(load, 'f', -1, 64), r))
		opts := x.s.RunOptions(c, r, filepath.Join(x.dir, dir), ks.names)
		applySearchLoad(opts, sr.On, load)
		x.progressStart(c, fmt.Sprintf("%s %g, repeat %d/%d", sr.On, load, r, sr.Repeats))
		ref, table, err := x.execute(ctx, opts, dir, r)
		if err != nil {
			return stepBreaks, err
		}
		ref.Load = load
		st.Runs = append(st.Runs, ref)
		if ref.Saturation != "" {
			st.Saturation = ref.Saturation
		}
		x.res.Combinations[ks.ci].Runs = append(x.res.Combinations[ks.ci].Runs, ref)
		if table != nil {
			tables = append(tables, table)
		}
		x.progressDone(ref, "")
	}
	fmt.Fprintf(x.o.Stderr, "  %s %g %s\n", sr.On, load, x.judgeStep(st, tables))
	x.kneeSteps(ks.k, ks.steps)
	return verdictOf(st), x.save()
}

// judgeStep sets a step's figures and its SLO verdict from its measured
// runs (a step with a run that could not be measured fails), and says it.
func (x *executor) judgeStep(st *KneeStep, tables []slo.Table) string {
	st.Throughput = stats.Summarize(values(tables, slo.AllOps, slo.Throughput))
	if len(tables) == len(st.Runs) && len(tables) > 0 {
		st.Outcomes, st.Pass = slo.Check(x.exprs, meanTable(tables))
		st.TooFewSamples = !st.Pass && tooFewSamples(st.Outcomes)
	} else {
		st.Outcomes = []slo.Outcome{{SLO: "runs", Detail: fmt.Sprintf("%d of %d runs could not be measured", len(st.Runs)-len(tables), len(st.Runs))}}
	}
	seen := map[string]bool{}
	for _, o := range st.Outcomes {
		if o.Metric == "" || seen[o.Op+" "+o.Metric] {
			continue
		}
		seen[o.Op+" "+o.Metric] = true
		st.Figures = append(st.Figures, StepFigure{Op: o.Op, Metric: o.Metric, Stat: stats.Summarize(values(tables, o.Op, o.Metric))})
	}
	if st.Pass {
		return "meets the SLO"
	}
	for _, o := range st.Outcomes {
		if st.TooFewSamples && !o.Pass {
			return "not enough samples for the SLO: " + o.Detail
		}
		if !o.Pass {
			return "breaks the SLO: " + o.Detail
		}
	}
	return "breaks the SLO"
}

// tooFewSamples reports whether the outcomes fail only for figures their
// runs had too few samples to define.
func tooFewSamples(outcomes []slo.Outcome) bool {
	few := false
	for _, o := range outcomes {
		if o.Pass {
			continue
		}
		if !slo.TooFewSamples(o) {
			return false
		}
		few = true
	}
	return few
}

// conclude records the knee: the highest load that meets the SLO (lo)
// and the lowest that breaks it (hi), 0 for none, and the saturation seen
// at the edge.
func (ks *kneeSearch) conclude(lo, hi float64) {
	kp := ks.k
	unit := map[string]string{"users": "users", "rate": "ops/s"}[ks.sr.On]
	if hi > 0 {
		b := hi
		kp.Broke = &b
	}
	switch {
	case lo > 0:
		v := lo
		kp.Load = &v
		st := ks.steps[lo]
		tp := st.Throughput
		kp.Throughput, kp.Figures = &tp, st.Figures
		if hi > 0 {
			kp.Summary = fmt.Sprintf("%g %s meet the SLO, %g break it", lo, unit, hi)
		} else {
			kp.Summary = fmt.Sprintf("the SLO holds up to the maximum searched, %g %s", lo, unit)
		}
	case hi > 0:
		kp.Summary = fmt.Sprintf("the SLO fails even at %g %s, the lowest load tried", hi, unit)
		if few := ks.fewBelow(hi); few > 0 {
			kp.Summary = fmt.Sprintf("the SLO fails at %g %s; the search stopped there, for at %g %s the runs had too few samples for the SLO's figures (run longer to search lower loads)", hi, unit, few, unit)
		}
	default:
		kp.Summary = fmt.Sprintf("no load up to %g %s gave the runs enough samples for the SLO's figures (run longer)", ks.sr.Max, unit)
	}
	at := lo
	if hi > 0 {
		at = hi
	}
	if st := ks.steps[at]; st != nil && st.Saturation != "" {
		kp.Saturation = fmt.Sprintf("at %g %s: %s", at, unit, st.Saturation)
		kp.Summary += "; " + kp.Saturation
	}
}

// fewBelow is the highest load under hi whose runs had too few samples, 0
// for none.
func (ks *kneeSearch) fewBelow(hi float64) float64 {
	few := 0.0
	for load, st := range ks.steps {
		if st.TooFewSamples && load < hi {
			few = math.Max(few, load)
		}
	}
	return few
}

// roundLoad rounds a load to what a step runs: whole users, whole
// operations per second from 10/s up.
func roundLoad(on string, v float64) float64 {
	if on == "users" {
		return math.Max(1, math.Floor(v))
	}
	if v >= 10 {
		return math.Round(v)
	}
	return math.Round(v*1000) / 1000
}

// bracket finds the highest load that passes (lo) and the lowest that
// fails (hi); 0 means none was found. From Start the load doubles (capped at
// Max) while it passes, or halves (down to 1 user, or Start/1024 ops/s)
// while it fails; then the bracket is bisected until hi - lo is within
// Precision of lo (or 1 user). A load whose runs have too few samples for
// the SLO's figures is neither: the search doubles past it, and stops
// halving there (lower loads have fewer samples still). step runs a load
// once; repeated loads are its business.
func bracket(sr Search, step func(float64) (stepVerdict, error)) (lo, hi float64, err error) {
	round := func(v float64) float64 { return roundLoad(sr.On, v) }
	few := 0.0 // the highest load whose runs had too few samples
	// try runs a load and moves the end of the bracket it falls on.
	try := func(load float64) error {
		v, err := step(load)
		if err != nil {
			return err
		}
		switch v {
		case stepMeets:
			lo = load
		case stepFewSamples:
			few = math.Max(few, load)
		default:
			hi = load
		}
		return nil
	}
	if err := try(round(sr.Start)); err != nil {
		return 0, 0, err
	}
	floor := 1.0
	if sr.On == "rate" {
		floor = sr.Start / 1024
	}
	// Widen until the other end is found: a passing load (or one with too
	// few samples) doubles, up to Max; a failing one halves, down to floor.
widen:
	for lo == 0 || hi == 0 {
		var next float64
		switch {
		case hi == 0:
			from := math.Max(lo, few)
			next = math.Min(round(2*from), sr.Max)
			if from >= sr.Max || next <= from {
				break widen
			}
		case few > 0:
			break widen
		default:
			next = round(hi / 2)
			if hi <= floor || next >= hi {
				break widen
			}
		}
		if err := try(next); err != nil {
			return lo, hi, err
		}
	}
	for i := 0; lo > 0 && hi > 0 && i < 40; i++ {
		gap := hi - lo
		if gap <= sr.Precision*lo || (sr.On == "users" && gap <= 1) {
			break
		}
		mid := round((lo + hi) / 2)
		if mid <= lo || mid >= hi {
			break
		}
		if err := try(mid); err != nil {
			return lo, hi, err
		}
		if few == mid {
			break // between loads that had samples enough: leave the bracket as it is
		}
	}
	return lo, hi, nil
}

// kneeSteps stores the steps sorted by load.
func (x *executor) kneeSteps(k *Knee, steps map[float64]*KneeStep) {
	k.Steps = k.Steps[:0]
	for _, st := range steps {
		k.Steps = append(k.Steps, *st)
	}
	sort.Slice(k.Steps, func(i, j int) bool { return k.Steps[i].Load < k.Steps[j].Load })
}

// kneeFailed reports whether some search found no load meeting the SLO.
func kneeFailed(r *Result) bool {
	for _, k := range r.Knees {
		if k.Load == nil && len(k.Steps) > 0 {
			return true
		}
	}
	return false
}

// kneeCSV is knee.csv: a row per step and SLO figure.
func kneeCSV(knees []Knee) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"combination", "label", "on", "load", "pass", "runs", "throughput_mean", "throughput_ci_low", "throughput_ci_high",
		"op", "metric", "mean", "ci_low", "ci_high"})
	for _, k := range knees {
		for _, st := range k.Steps {
			tm := st.Throughput.Mean
			base := []string{k.Combination, k.Label, k.On, strconv.FormatFloat(st.Load, 'f', -1, 64), strconv.FormatBool(st.Pass),
				strconv.Itoa(len(st.Runs)), fnum(&tm), fnum(st.Throughput.CILow), fnum(st.Throughput.CIHigh)}
			if len(st.Figures) == 0 {
				_ = w.Write(append(base, "", "", "", "", ""))
			}
			for _, f := range st.Figures {
				m := f.Mean
				_ = w.Write(append(append([]string(nil), base...), f.Op, f.Metric, fnum(&m), fnum(f.CILow), fnum(f.CIHigh)))
			}
		}
	}
	w.Flush()
	return b.Bytes()
}
