package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/report"
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
	dir := o.Out
	if dir == "" {
		dir = s.Results.Text
	}
	if dir == "" {
		base := filepath.Join("scalelab-results", fmt.Sprintf("%s-%s", sanitize(s.Name), time.Now().Format("20060102-150405")))
		var err error
		if dir, err = results.CreateUnique(base); err != nil {
			return nil, results.WithCode(results.ExitUnfinished, err)
		}
	} else if err := results.Create(dir); err != nil {
		return nil, results.WithCode(results.ExitUsage, err)
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, SpecFile), s.Source); err != nil {
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
		x.res.Kind = KindKnee
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

// newResult fills experiment.json's description of the experiment.
func (x *executor) newResult(knee bool) *Result {
	s := x.s
	r := &Result{Schema: SchemaVersion, Kind: KindMatrix, Name: s.Name, Description: s.Description, File: s.File,
		Profile: s.Profile, Scenario: s.Scenario.Text, Status: results.StatusRunning, Command: x.o.Args,
		Scalelab: results.Version{Version: results.BuildVersion(), Go: runtime.Version()}, Host: results.HostFacts(),
		Start: time.Now().UTC(), Order: s.Order, Confidence: Confidence}
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

func (x *executor) save() error { return writeResult(x.res, x.dir) }

// withClusters starts the clusters of groups (those that need one: the
// cache tier's cluster, a store cluster, then the app cluster in front of
// it), runs fn with the names of the clusters each group key's runs use,
// and stops every cluster it started whatever happened, in the reverse
// order.
func (x *executor) withClusters(ctx context.Context, gs []group, fn func(map[string]ClusterNames) error) (err error) {
	var stops []func() error
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			if serr := stops[i](); serr != nil && err == nil {
				err = serr
			}
		}
	}()
	names := map[string]ClusterNames{}
	for _, g := range gs {
		up := func(cs *ClusterSpec, shape string) (string, error) {
			name, stop, uerr := x.upCluster(ctx, g, cs, shape)
			if uerr == nil {
				stops = append(stops, stop)
			}
			return name, uerr
		}
		var n ClusterNames
		if g.cache != nil {
			if n.Cache, err = up(g.cache, "1 node, the cache tier"); err != nil {
				return err
			}
		}
		store := ""
		if g.spec != nil {
			shape := fmt.Sprintf("%d nodes", max(g.spec.Nodes, 1))
			if max(g.spec.Nodes, 1) == 1 {
				shape = "1 node"
			}
			if g.spec.Replicas > 0 {
				shape += fmt.Sprintf(" + %d replicas", g.spec.Replicas)
			}
			if nw := g.spec.NetworkText(); nw != "" {
				shape += ", " + nw
			}
			if store, err = up(g.spec, shape); err != nil {
				return err
			}
			n.Run = store
		}
		if g.app != nil {
			app := *g.app
			app.Options = map[string]string{}
			for k, v := range g.app.Options {
				app.Options[k] = v
			}
			if store != "" {
				app.Options[apptier.OptStore] = store
			}
			if n.Cache != "" {
				app.Options[apptier.OptCache] = n.Cache // the servers cache in it
			}
			if n.Run, err = up(&app, appShape(&app, store)); err != nil {
				return err
			}
		}
		names[g.key] = n
	}
	return fn(names)
}

// upCluster starts one cluster of group g, recording it in the result,
// and returns its name and how to stop it (which records that too).
func (x *executor) upCluster(ctx context.Context, g group, cs *ClusterSpec, shape string) (string, func() error, error) {
	name := clusterName(cs.Engine, len(x.res.Clusters)+1)
	use := ClusterUse{Name: name, Engine: cs.Engine, Nodes: max(cs.Nodes, 1)}
	for _, ci := range g.combos {
		use.Combinations = append(use.Combinations, x.combos[ci].ID)
	}
	fmt.Fprintf(x.o.Stderr, "starting a local %s cluster (%s) for %s ...\n", cs.Engine, shape, strings.Join(use.Combinations, ", "))
	start := time.Now()
	st, serr := startCluster(ctx, cs, name)
	use.UpSeconds = time.Since(start).Seconds()
	if serr != nil {
		use.Error, use.Stopped = serr.Error(), true
		x.res.Clusters = append(x.res.Clusters, use)
		code := results.ExitUnfinished
		if ctx.Err() != nil {
			code = results.ExitInterrupted
		}
		return "", nil, &errAbort{results.WithCode(code, serr)}
	}
	use.Nodes = len(st.Nodes)
	x.res.Clusters = append(x.res.Clusters, use)
	idx := len(x.res.Clusters) - 1
	_ = x.save()
	stop := func() error {
		serr := stopCluster(st)
		x.res.Clusters[idx].Stopped = serr == nil
		if serr != nil {
			x.res.Clusters[idx].Error = serr.Error()
			fmt.Fprintf(x.o.Stderr, "warning: %v; stop it with `scalelab cluster down %s`\n", serr, name)
			return &errAbort{results.WithCode(results.ExitUnfinished, serr)}
		}
		fmt.Fprintf(x.o.Stderr, "stopped cluster %s\n", name)
		return nil
	}
	return name, stop, nil
}

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
	st := Summarize(vs)
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
	if st := Summarize(vs); st.CIHalfPct != nil && r.UntilCIWithin > 0 {
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
	dir := filepath.Join(RunsDir, fmt.Sprintf("%s-r%02d", c.ID, repeat))
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
	st := Summarize(x.ruleValues(ci))
	if st.CIHalfPct == nil {
		return ""
	}
	return fmt.Sprintf(", CI ±%.1f%% (target %g%%)", *st.CIHalfPct, 100*r.UntilCIWithin)
}

// execute runs one run through the runner. Runs that could not finish are
// recorded and the experiment goes on; bad usage, interruption and
// internal errors abort it.
func (x *executor) execute(ctx context.Context, opts *runner.Options, dir string, repeat int) (RunRef, slo.Table, error) {
	ref := RunRef{Repeat: repeat, Dir: dir, Seed: opts.Seed, Start: time.Now().UTC()}
	var doc *results.Run
	var err error
	start := time.Now()
	if opts.Segment.Split() {
		// N segment processes, merged into the run's directory (segments.go)
		if doc, err = x.runSegments(ctx, opts); doc == nil && results.ExitCode(err) != results.ExitUnfinished {
			return ref, nil, &errAbort{fmt.Errorf("%s: %w", dir, err)}
		}
	} else {
		plan, perr := runner.NewPlan(opts)
		if perr != nil {
			return ref, nil, &errAbort{fmt.Errorf("%s: %w", dir, perr)}
		}
		obs := runner.Observer(runner.Quiet{})
		if x.o.Observer != nil {
			obs = x.o.Observer()
		}
		doc, err = plan.Execute(ctx, obs, io.Discard, io.Discard)
	}
	ref.Seconds = time.Since(start).Seconds()
	x.runsDone++
	x.runSeconds += ref.Seconds
	x.res.Totals.Runs++
	x.res.Totals.Seconds += ref.Seconds
	code := results.ExitCode(err)
	ref.ExitCode = code
	if err != nil && !errors.Is(err, results.ErrReported) {
		ref.Error = err.Error()
	}
	if doc != nil {
		ref.Status, ref.ExitCode, ref.Failures = doc.Status, doc.ExitCode, doc.Failures
		if doc.Totals != nil {
			ref.ThroughputPerS = doc.Totals.ThroughputPerS
		}
		if doc.Telemetry != nil {
			ref.Saturation = doc.Telemetry.Saturation
		}
	}
	switch code {
	case results.ExitOK, results.ExitCheckFailed:
		if doc != nil && len(doc.Summary) > 0 {
			ref.Measured = true
			x.res.Totals.Measured++
			return ref, slo.FromRun(doc), nil
		}
		return ref, nil, nil
	case results.ExitUnfinished:
		x.res.Totals.Unfinished++
		return ref, nil, nil
	}
	return ref, nil, &errAbort{fmt.Errorf("run %s: %w", dir, err)}
}

func (x *executor) progressStart(c *Combination, what string) {
	n := x.runsDone + 1
	total := ""
	if x.remaining != nil {
		total = fmt.Sprintf("/%d", x.runsDone+1+x.remaining()) // this run is already counted as started
	}
	fmt.Fprintf(x.o.Stderr, "[%d%s] %s %s, %s ...", n, total, c.ID, c.Label, what)
}

func (x *executor) progressDone(ref RunRef, extra string) {
	eta := ""
	if x.remaining != nil && x.runsDone > 0 {
		per := x.runSeconds / float64(x.runsDone) * float64(time.Second)
		if left := x.remaining(); left > 0 {
			eta = fmt.Sprintf(", ETA %s", time.Duration(float64(left)*per).Round(time.Second))
			if x.upTo != nil {
				if most := x.upTo(); most > left {
					eta += fmt.Sprintf(" (at most %s if the CI narrows slowly)", time.Duration(float64(most)*per).Round(time.Second))
				}
			}
		}
	}
	status := ref.Status
	if status == "" {
		status = "error"
	}
	if ref.Measured {
		fmt.Fprintf(x.o.Stderr, " %.1f ops/s (%.1fs, %s%s%s)\n", ref.ThroughputPerS, ref.Seconds, status, extra, eta)
		return
	}
	msg := ref.Error
	if msg == "" && len(ref.Failures) > 0 {
		msg = ref.Failures[0]
	}
	fmt.Fprintf(x.o.Stderr, " %s, exit %d: %s%s\n", status, ref.ExitCode, msg, eta)
}

// finish computes the statistics and verdicts, writes every file, prints
// the table and returns the experiment's exit status.
func (x *executor) finish(ctx context.Context, runErr error) (*Result, error) {
	r := x.res
	x.remaining, x.upTo = nil, nil
	sloFailed := 0
	for ci := range r.Combinations {
		cr := &r.Combinations[ci]
		if r.Kind == KindMatrix && x.s.Repeats.Fixed == 0 {
			st := Summarize(x.ruleValues(ci))
			conv := st.CIHalfPct != nil && *st.CIHalfPct <= 100*x.s.Repeats.UntilCIWithin
			cr.Converged, cr.CIHalfPct = &conv, st.CIHalfPct
			if !conv && len(cr.Runs) > 0 && runErr == nil {
				r.Notes = append(r.Notes, fmt.Sprintf("%s %s: the CI did not reach %g%% within %d repeats", cr.ID, cr.Label, 100*x.s.Repeats.UntilCIWithin, x.s.Repeats.Max))
			}
		}
		if len(x.exprs) == 0 || r.Kind == KindKnee || len(cr.Runs) == 0 {
			continue
		}
		pass := false
		if tables := x.tables[ci]; len(tables) > 0 {
			cr.SLO, pass = slo.Check(x.exprs, meanTable(tables))
		} else {
			cr.SLO = []slo.Outcome{{SLO: strings.Join(r.SLO, ", "), Detail: "no run was measured"}}
		}
		cr.SLOPass = &pass
		if !pass {
			sloFailed++
			for _, o := range cr.SLO {
				if !o.Pass {
					r.Failures = append(r.Failures, fmt.Sprintf("%s %s: SLO %s: %s", cr.ID, cr.Label, o.SLO, o.Detail))
				}
			}
		}
	}
	checkFailed := 0
	for _, cr := range r.Combinations {
		for _, run := range cr.Runs {
			if run.ExitCode == results.ExitCheckFailed {
				checkFailed++
				for _, f := range run.Failures {
					r.Failures = append(r.Failures, fmt.Sprintf("%s %s: %s", cr.ID, run.Dir, f))
				}
			}
		}
	}
	if r.Kind == KindMatrix {
		r.Comparison = compare(r.Combinations, x.tables)
	}
	code := results.ExitOK
	var err error
	switch {
	case ctx.Err() != nil || results.ExitCode(runErr) == results.ExitInterrupted:
		code, err = results.ExitInterrupted, results.WithCode(results.ExitInterrupted, errors.New("experiment interrupted; the runs so far are in "+x.dir))
	case runErr != nil:
		code, err = results.ExitCode(runErr), runErr
	case r.Totals.Unfinished > 0:
		code, err = results.ExitUnfinished, results.WithCode(results.ExitUnfinished, fmt.Errorf("%d of %d runs could not finish (their run.json says why)", r.Totals.Unfinished, r.Totals.Runs))
	case sloFailed > 0 || checkFailed > 0 || kneeFailed(r):
		code = results.ExitCheckFailed
		err = results.WithCode(code, fmt.Errorf("%s", failSummary(sloFailed, checkFailed, r)))
	}
	r.Status = map[int]string{results.ExitOK: results.StatusOK, results.ExitInterrupted: results.StatusInterrupted}[code]
	if r.Status == "" {
		r.Status = results.StatusFailed
	}
	r.ExitCode = code
	if err != nil {
		r.Error = err.Error()
	}
	end := time.Now().UTC()
	r.End = &end
	if werr := x.save(); werr != nil && err == nil {
		err = results.WithCode(results.ExitUnfinished, werr)
	}
	WriteTable(x.o.Stdout, r)
	// the page of everything measured so far, also after an interruption
	if page, rerr := report.WriteExperiment(x.dir, ""); rerr != nil {
		fmt.Fprintf(x.o.Stderr, "warning: report.html: %v (scalelab report %s makes it again)\n", rerr, x.dir)
	} else {
		fmt.Fprintf(x.o.Stdout, "report: %s\n", page)
	}
	fmt.Fprintf(x.o.Stdout, "results: %s\n", x.dir)
	return r, err
}

func failSummary(sloFailed, checkFailed int, r *Result) string {
	var parts []string
	if sloFailed > 0 {
		parts = append(parts, fmt.Sprintf("the SLO failed for %d of %d combinations", sloFailed, len(r.Combinations)))
	}
	if checkFailed > 0 {
		parts = append(parts, fmt.Sprintf("%d runs failed a check", checkFailed))
	}
	if kneeFailed(r) {
		parts = append(parts, "the SLO failed even at the lowest load searched")
	}
	return strings.Join(parts, "; ")
}

// sanitize makes a name safe for a directory.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, s)
	if s == "" || strings.Trim(s, ".") == "" {
		return "experiment"
	}
	return s
}
