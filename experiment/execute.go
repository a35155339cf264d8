package experiment

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/slo"
)

// Options control how an experiment runs.
type Options struct {
	Out     string    // results directory; overrides the file's `results:`
	Repeats int       // a fixed repeat count overriding the file's rule; 0 keeps it
	Knee    bool      // run the knee search (a file with `search:` always does)
	Search  *Search   // overrides the file's search (flags of `experiment knee`)
	Stdout  io.Writer // the comparison table
	Stderr  io.Writer // a progress line per run
	Args    []string  // the command line, recorded in experiment.json
	// Observer makes the observer of each run (default: runner.Quiet).
	Observer func() runner.Observer
	// Executable is the scalelab binary a divided run (`segments: N`)
	// starts its segment processes with; default: this process's.
	Executable string
}

// executor runs one experiment.
type executor struct {
	s      *Spec
	o      Options
	dir    string
	res    *Result
	tables [][]slo.Table // per combination, the measured runs' figures
	combos []*Combination
	exprs  []slo.Expr
	rng    *rand.Rand

	attempts   map[int]int // runs started per combination
	runsDone   int
	runSeconds float64
	remaining  func() int // runs still expected, for the ETA; nil when unknown
	upTo       func() int // runs still possible at most (adaptive repeats); nil when unknown
}

// errAbort stops the experiment (usage error, interruption, internal error).
type errAbort struct{ err error }

func (e *errAbort) Error() string { return e.err.Error() }
func (e *errAbort) Unwrap() error { return e.err }

// Run executes a validated experiment: every combination's runs in the
// file's order with its repeat rule (or a knee search per combination),
// starting and stopping local clusters around the runs that need them. It
// writes the results directory and prints the table to o.Stdout. The error
// carries the exit code: 1 when an SLO or a check failed, 3 when
// interrupted, 4 when runs could not finish.
func Run(ctx context.Context, s *Spec, o Options) (*Result, error) {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	combos, err := s.Matrix()
	if err != nil {
		return nil, results.WithCode(results.ExitUsage, err)
	}
	knee := o.Knee || s.Search != nil || o.Search != nil
	var search Search
	if knee {
		if search, err = s.searchFor(o.Search); err != nil {
			return nil, results.WithCode(results.ExitUsage, err)
		}
	}
	dir, err := resultsDir(s, o)
	if err != nil {
		return nil, err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, results.SpecFile), s.Source); err != nil {
		return nil, results.WithCode(results.ExitUnfinished, err)
	}
	x := &executor{s: s, o: o, dir: dir, combos: combos, attempts: map[int]int{}}
	for _, e := range s.SLO {
		x.exprs = append(x.exprs, e.Expr)
	}
	seed := uint64(1)
	for _, a := range s.Load {
		if a.Key == "seed" {
			seed, _ = strconv.ParseUint(strings.TrimSpace(a.Value), 10, 64)
		}
	}
	x.rng = rand.New(rand.NewPCG(seed, 0x5ca1e1ab))
	x.res = x.newResult(knee)
	x.tables = make([][]slo.Table, len(x.combos))
	if knee {
		x.res.Kind = results.KindKnee
		x.res.Repeats = RepeatRule{Fixed: search.Repeats}
	}
	if err := x.save(); err != nil {
		return x.res, results.WithCode(results.ExitUnfinished, err)
	}
	gs := groups(combos)
	x.notes(gs, knee, seed)
	fmt.Fprintf(o.Stderr, "experiment %s: %s, %d combinations, %s, results in %s\n", s.Name, s.Scenario.Text, len(combos), x.describeRepeats(knee, search), dir)

	run := func(g group) func(map[string]ClusterNames) error {
		return func(names map[string]ClusterNames) error {
			if knee {
				return x.kneeGroup(ctx, g, names, search)
			}
			return x.matrixGroup(ctx, g, names)
		}
	}
	var runErr error
	if s.ClusterLifetime == "experiment" {
		all := group{}
		for i := range combos {
			all.combos = append(all.combos, i)
		}
		runErr = x.withClusters(ctx, gs, run(all))
	} else {
		for _, g := range gs {
			if runErr = x.withClusters(ctx, []group{g}, run(g)); runErr != nil {
				break
			}
		}
	}
	return x.finish(ctx, runErr)
}

// resultsDir creates the experiment's results directory: the one given,
// or a new one named after the experiment and the time.
func resultsDir(s *Spec, o Options) (string, error) {
	dir := o.Out
	if dir == "" {
		dir = s.Results.Text
	}
	if dir != "" {
		if err := results.Create(dir); err != nil {
			return "", results.WithCode(results.ExitUsage, err)
		}
		return dir, nil
	}
	base := filepath.Join("scalelab-results", fmt.Sprintf("%s-%s", sanitize(s.Name), time.Now().Format("20060102-150405")))
	dir, err := results.CreateUnique(base)
	if err != nil {
		return "", results.WithCode(results.ExitUnfinished, err)
	}
	return dir, nil
}

// newResult fills experiment.json's description of the experiment.
func (x *executor) newResult(knee bool) *Result {
	s := x.s
	r := &Result{Schema: results.ExperimentSchema, Kind: results.KindMatrix, Name: s.Name, Description: s.Description, File: s.File,
		Profile: s.Profile, Scenario: s.Scenario.Text, Status: results.StatusRunning, Command: x.o.Args,
		Scalelab: results.Version{Version: results.BuildVersion(), Go: runtime.Version()}, Host: results.HostFacts(),
		Start: time.Now().UTC(), Order: s.Order, Confidence: stats.Confidence}
	rule := s.Repeats
	if x.o.Repeats > 0 {
		rule = Repeats{Fixed: x.o.Repeats}
	}
	x.s.Repeats = rule
	r.Repeats = RepeatRule{Fixed: rule.Fixed}
	if rule.Fixed == 0 {
		r.Repeats = RepeatRule{UntilCIWithinPct: 100 * rule.UntilCIWithin, Min: rule.Min, Max: rule.Max, Metric: rule.Metric, Op: rule.Op}
	}
	for _, f := range s.Factors {
		fi := FactorInfo{Name: f.Name}
		for _, l := range f.Levels {
			fi.Levels = append(fi.Levels, l.Label)
		}
		r.Factors = append(r.Factors, fi)
	}
	for _, e := range x.exprs {
		r.SLO = append(r.SLO, e.Text)
	}
	for _, c := range x.combos {
		cr := CombinationResult{ID: c.ID, Label: c.Label, Levels: c.Levels, Engine: c.Engine, Settings: c.Sets, Baseline: c.Baseline, ComparedTo: c.ComparedTo, Runs: []RunRef{}}
		if c.Cluster != nil {
			cr.Cluster = &ClusterInfo{Engine: c.Cluster.Engine, Nodes: max(c.Cluster.Nodes, 1), Replicas: c.Cluster.Replicas, Heap: c.Cluster.Heap, Roles: c.Cluster.Roles}
		}
		if c.Baseline && r.Baseline == "" {
			r.Baseline = c.ID
		}
		r.Combinations = append(r.Combinations, cr)
	}
	r.BaselineRule = s.BaselineRule(x.combos)
	return r
}

// notes explain the order of the runs and their seeds in experiment.json.
func (x *executor) notes(gs []group, knee bool, seed uint64) {
	r := x.res
	clusters := 0
	for _, g := range gs {
		if g.spec != nil || g.cache != nil {
			clusters++
		}
	}
	switch {
	case knee:
		r.Notes = append(r.Notes, "knee search: each combination's load doubles until the SLO breaks, then bisects; every step runs its repeats back to back")
	case x.s.Order == OrderInterleaved && clusters > 0 && x.s.ClusterLifetime == "experiment":
		r.Notes = append(r.Notes, fmt.Sprintf("runs are interleaved across all combinations; every local cluster (%d) runs for the whole experiment (cluster_lifetime: experiment)", clusters))
	case x.s.Order == OrderInterleaved && clusters > 0:
		r.Notes = append(r.Notes, fmt.Sprintf("runs are interleaved within each cluster group (%d groups): each local cluster starts once, its combinations take turns run by run, then it stops", len(gs)))
	case x.s.Order == OrderInterleaved:
		r.Notes = append(r.Notes, "runs are interleaved: repeat 1 of every combination, then repeat 2, ..., so all combinations see the same time windows of the machine")
	case x.s.Order == OrderRandomized:
		r.Notes = append(r.Notes, fmt.Sprintf("runs are randomized: each round visits the combinations in a random order (seed %d)", seed))
	default:
		r.Notes = append(r.Notes, "runs are grouped: all repeats of a combination run back to back")
	}
	r.Notes = append(r.Notes, fmt.Sprintf("repeat r of every combination uses seed %d+r-1 (the same data and choices across combinations)", seed))
}

// describeRepeats says how often the combinations run, for the first
// progress line.
func (x *executor) describeRepeats(knee bool, s Search) string {
	if knee {
		return fmt.Sprintf("knee search on %s from %g (repeats %d per step)", s.On, s.Start, s.Repeats)
	}
	r := x.s.Repeats
	if r.Fixed > 0 {
		return fmt.Sprintf("%d repeats, %s", r.Fixed, x.s.Order)
	}
	return fmt.Sprintf("repeats until the 95%% CI of %s is within %g%% (%d-%d), %s", r.Metric, 100*r.UntilCIWithin, r.Min, r.Max, x.s.Order)
}

// save writes experiment.json as it stands.
func (x *executor) save() error { return writeResult(x.res, x.dir) }
