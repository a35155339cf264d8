package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/fault"
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/promsource"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
	"github.com/scalelab/scalelab/slo"
	"github.com/scalelab/scalelab/wait"
)

// Plan is a validated run: everything resolved before anything starts.
type Plan struct {
	flags    *Options
	scen     scenario.Scenario
	eng      engine.Engine
	settings *setting.Set
	model    load.Model
	opts     load.Options
	dir      string
	cluster  *cluster.State      // --cluster, or the store of an app cluster
	app      *cluster.State      // --cluster naming an app cluster (app.go)
	faults   []fault.Spec        // --fault (fault.go)
	tiers    []planTier          // connections beside the store (tiers.go)
	autoDir  bool                // dir is the default name: take the next free one
	prom     *promsource.Mapping // --telemetry-source and --observe (prom.go)
	stderr   io.Writer
	warnings []string // dead nodes the run can do without (running.go)
	// auditCounts reads the audit's counts for the live figures (live.go)
	auditCounts func() audit.LiveCounts
	// madeParent is the parent of dir when createDir made it
	// (discardUnstarted removes it again when it is left empty)
	madeParent string
}

// DefaultEngine is the engine of a run that names neither --engine nor
// --cluster: the embedded SQLite.
const DefaultEngine = engine.Default

// NewPlan resolves scenario, engine, settings and load model, reporting
// every bad input as a usage error (exit code 2). Nothing is created.
func NewPlan(f *Options) (*Plan, error) {
	if f.Given == nil {
		f.Given = map[string]bool{}
	}
	if f.Scenario == "" {
		return nil, results.UsageErr("run: no scenario given; usage: scalelab run SCENARIO [flags] (see `scalelab list`)")
	}
	scen, err := scenario.Lookup(f.Scenario)
	if err != nil {
		return nil, results.UsageErr("%v", err)
	}
	cl, app, err := planCluster(f, scen)
	if err != nil {
		return nil, err
	}
	if f.Engine == "" {
		if err := CheckDefaultTarget(f.Target); err != nil {
			return nil, err
		}
		f.Engine = DefaultEngine
	}
	eng, err := engine.Lookup(f.Engine)
	if err != nil {
		return nil, results.UsageErr("--engine: %v", err)
	}
	if tc, ok := eng.(engine.TargetChecker); ok && f.Target != "" {
		if err := tc.CheckTarget(f.Target); err != nil {
			return nil, results.WithCode(results.ExitUsage, fmt.Errorf("--target: %w", err))
		}
	}
	if pl, ok := eng.(engine.ProcessLocal); ok && f.Segment.Split() && pl.ProcessLocal(f.Target) {
		return nil, results.UsageErr("--segment %s: the %s engine keeps its data inside each scalelab process (or its results directory), so the segments of a divided test cannot share it; use a server engine, or sqlite with a --target file", f.Segment, eng.Name())
	}
	if !scenario.Supports(scen, eng.Name()) {
		return nil, results.UsageErr("scenario %s has no storage for engine %s; it supports: %s", scen.Name(), eng.Name(), strings.Join(scen.Engines(), ", "))
	}
	if err := planSegment(f, scen); err != nil {
		return nil, err
	}
	tiers, sets, err := planTiers(f, scen)
	if err != nil {
		return nil, err
	}
	specs := append(append([]setting.Spec{}, eng.Settings()...), scen.Settings()...)
	if f.Model == load.ModelPhases || f.Phases != "" {
		specs = append(specs, BreakSettings()...)
	}
	set := setting.NewSet(specs...)
	for _, s := range sets {
		if err := applySetting(set, s, eng.Name(), scen.Name()); err != nil {
			return nil, results.WithCode(results.ExitUsage, err)
		}
	}
	if pc, ok := eng.(engine.PlanChecker); ok {
		if err := pc.CheckPlan(set, cl); err != nil {
			return nil, results.WithCode(results.ExitUsage, err)
		}
	}
	if _, err := slo.ParseList(f.SLO); err != nil {
		return nil, results.WithCode(results.ExitUsage, fmt.Errorf("--slo: %w", err))
	}
	model, opts, err := buildModel(f, f.Given)
	if err != nil {
		return nil, err
	}
	opts.Segment = f.Segment
	faults, err := planFaults(f, faultTarget(app, cl, tiers), opts.Duration)
	if err != nil {
		return nil, err
	}
	if f.Segment.Index > 0 {
		faults = nil // segment 0 injects a divided test's faults, once
	}
	dir := f.Out
	if dir == "" {
		dir = filepath.Join("scalelab-results", fmt.Sprintf("%s-%s-%s", scen.Name(), eng.Name(), time.Now().Format("20060102-150405")))
	}
	prom, err := planProm(f)
	if err != nil {
		return nil, err
	}
	if err := checkLive(f); err != nil {
		return nil, err
	}
	p := &Plan{flags: f, scen: scen, eng: eng, settings: set, model: model, opts: opts, dir: dir, cluster: cl, app: app, faults: faults, tiers: tiers, autoDir: f.Out == "", prom: prom, stderr: io.Discard}
	if err := checkSegmentShares(p); err != nil {
		return nil, err
	}
	if err := p.checkRunning(); err != nil {
		return nil, err
	}
	return p, nil
}

// planCluster loads the --cluster: the store's cluster, or an app tier
// (app) and the store cluster behind it (cl). A cluster has one engine:
// --cluster implies it, and an explicit --engine that disagrees is an
// error.
func planCluster(f *Options, scen scenario.Scenario) (cl, app *cluster.State, err error) {
	if f.Cluster == "" {
		return nil, nil, nil
	}
	if f.Target != "" {
		return nil, nil, results.UsageErr("run: --cluster and --target are exclusive")
	}
	if cl, err = cluster.Load(f.Cluster); err != nil {
		return nil, nil, results.UsageErr("--cluster: %v", err)
	}
	if cl.Engine == apptier.Name {
		app = cl
		if cl, err = resolveApp(f, scen, app); err != nil {
			return nil, nil, err
		}
	}
	if cl == nil {
		return nil, app, nil
	}
	if f.Engine == "" {
		f.Engine = cl.Engine
	} else if cl.Engine != f.Engine {
		return nil, nil, results.UsageErr("--cluster %s is a %s cluster, but --engine %s was given; drop --engine (the cluster implies it) or name a %s cluster", cl.Name, cl.Engine, f.Engine, f.Engine)
	}
	return cl, app, nil
}

// Dir returns the results directory the run writes.
func (p *Plan) Dir() string { return p.dir }

// Settings returns the resolved settings.
func (p *Plan) Settings() *setting.Set { return p.settings }

// applySetting applies one --set, explaining keys that belong to an engine
// or scenario other than the ones in use.
func applySetting(set *setting.Set, assignment, engName, scenName string) error {
	key, _, _ := strings.Cut(assignment, "=")
	key = strings.TrimSpace(key)
	if prefix, _, ok := strings.Cut(key, "."); ok && !set.Has(key) && prefix == "phases" && !set.Has(KeyBreakFactor) {
		return fmt.Errorf("%w: --set %s: the phases.* settings are a phases load's (--phases)", setting.ErrUnknownKey, assignment)
	}
	if prefix, _, ok := strings.Cut(key, "."); ok && !set.Has(key) && prefix != engName && prefix != scenName {
		if _, err := engine.Lookup(prefix); err == nil {
			return fmt.Errorf("%w: --set %s: the setting belongs to engine %s, but this run uses engine %s", setting.ErrUnknownKey, assignment, prefix, engName)
		}
		if _, err := scenario.Lookup(prefix); err == nil {
			return fmt.Errorf("%w: --set %s: the setting belongs to scenario %s, but this run is of scenario %s", setting.ErrUnknownKey, assignment, prefix, scenName)
		}
	}
	if err := set.Apply(assignment); err != nil {
		return fmt.Errorf("--set: %w", err)
	}
	return nil
}

// buildModel turns the load flags into a validated model.
func buildModel(f *Options, given map[string]bool) (load.Model, load.Options, error) {
	name := f.Model
	if name == "" {
		switch {
		case given["phases"]:
			name = load.ModelPhases
		case given["rate"]:
			name = load.ModelRate
		case threadsGiven(f, given):
			name = load.ModelThreads
		default:
			name = load.ModelClosed
		}
	}
	if err := f.checkConflicts(name, given); err != nil {
		return nil, load.Options{}, err
	}
	opts := load.Options{Duration: f.Duration, Ops: f.Ops, Seed: f.Seed, Drain: f.Drain}
	if f.Warmup < 0 {
		return nil, opts, results.UsageErr("run: --warmup %s must not be negative", f.Warmup)
	}
	if f.Duration < 0 {
		return nil, opts, results.UsageErr("run: --duration %s must not be negative", f.Duration)
	}
	if f.Ops < 0 {
		return nil, opts, results.UsageErr("run: --ops %d must not be negative", f.Ops)
	}
	think, err := load.ParseThink(f.Think)
	if err != nil {
		return nil, opts, results.WithCode(results.ExitUsage, err)
	}
	var m load.Model
	switch name {
	case load.ModelClosed:
		users := f.Users
		if !given["users"] {
			users = 8
		}
		m = &load.Closed{Users: users, Think: think}
	case load.ModelRate:
		if f.Rate == "" {
			return nil, opts, results.UsageErr("run: the rate model needs --rate, e.g. --rate 5000/s")
		}
		r, err := load.ParseRate(f.Rate)
		if err != nil {
			return nil, opts, results.WithCode(results.ExitUsage, err)
		}
		workers := f.Users
		if !given["users"] {
			workers = 32
		}
		arrivals := f.Arrivals
		if arrivals == "" {
			arrivals = "constant" // as `scalelab run` defaults --arrivals
		}
		m = &load.Rate{Rate: r, Arrivals: arrivals, Workers: workers}
	case load.ModelPhases:
		if f.Phases == "" {
			return nil, opts, results.UsageErr("run: the phases model needs --phases, e.g. --phases 30s@1/s,30s@2/s")
		}
		ph, err := load.ParsePhases(f.Phases)
		if err != nil {
			return nil, opts, results.WithCode(results.ExitUsage, err)
		}
		pm := &load.Phases{Phases: ph, Think: think}
		if opts.Duration == 0 {
			opts.Duration = pm.Total()
		}
		if opts.Duration < pm.Total() {
			// a cut phase would be summarised as the phase it was not
			return nil, opts, results.UsageErr("run: --duration %s is shorter than the phases --phases %s, %s in all; "+
				"drop --duration (the phases set the run's length), give at least %s, or shorten the phases", opts.Duration, f.Phases, pm.Total(), pm.Total())
		}
		m = pm
	case load.ModelThreads:
		m = threadsModel(f, given, think)
	default:
		return nil, opts, results.UsageErr("run: --model %q; allowed: %s", name, strings.Join(load.ModelNames(), "|"))
	}
	if err := m.Validate(); err != nil {
		return nil, opts, results.WithCode(results.ExitUsage, err)
	}
	if th, ok := m.(*load.Threads); ok && th.Loops > 0 {
		// the last user's last loop ends the run; --duration and --ops
		// only cut it short
	} else if opts.Duration == 0 && opts.Ops == 0 {
		opts.Duration = load.DefaultDuration // one rule for every scenario
	}
	if opts.Duration > 0 && f.Warmup >= opts.Duration {
		return nil, opts, results.UsageErr("run: --warmup %s leaves nothing to measure in a %s run", f.Warmup, opts.Duration)
	}
	return m, opts, nil
}

// runState accumulates run.json as the run goes.
type runState struct {
	doc  *results.Run
	path string
}

func (s *runState) save() error { return results.WriteJSON(s.path, s.doc) }

// finish records the outcome in run.json whatever happened, and returns
// the document with the error that carries the exit code.
func (s *runState) finish(status string, err error) (*results.Run, error) {
	doc := s.doc
	code := results.ExitCode(err)
	if err == nil && status == results.StatusFailed {
		code = results.ExitCheckFailed
	}
	if status == results.StatusInterrupted {
		code = results.ExitInterrupted
	}
	doc.Status, doc.ExitCode = status, code
	if err != nil {
		doc.Error = metrics.Redact(err.Error())
	}
	end := time.Now().UTC()
	doc.End = &end
	if werr := s.save(); werr != nil && err == nil {
		return doc, werr
	}
	if err == nil && code != results.ExitOK {
		return doc, &results.ExitError{Code: code, Err: results.ErrReported}
	}
	return doc, err
}

// createDir creates the results directory: a new one beside the name
// when scalelab chose it, else the one given, which must not exist.
func (p *Plan) createDir() error {
	if _, err := os.Stat(filepath.Dir(p.dir)); errors.Is(err, fs.ErrNotExist) {
		p.madeParent = filepath.Dir(p.dir)
	}
	if !p.autoDir {
		if err := results.Create(p.dir); err != nil {
			return results.WithCode(results.ExitUsage, err)
		}
		return nil
	}
	dir, err := results.CreateUnique(p.dir)
	if err != nil {
		return results.WithCode(results.ExitUnfinished, err)
	}
	p.dir = dir
	return nil
}

// discardUnstarted removes the results directory of a run refused as a
// configuration error (exit 2: a refused login, a setting, an object
// scalelab did not create) when it holds only what the run put there at
// the start: run.json, and the store file of an engine that keeps it in
// the directory (SQLite without --target) with its journals. It reports
// whether it removed the directory, saying so on stderr.
func (p *Plan) discardUnstarted(err error, stderr io.Writer) bool {
	if results.ExitCode(err) != results.ExitUsage {
		return false
	}
	entries, rerr := os.ReadDir(p.dir)
	if rerr != nil {
		return false
	}
	ours := map[string]bool{results.RunFile: true}
	if f, ok := engine.StoreFile(p.eng.Name(), engine.Config{Target: p.flags.Target, Dir: p.dir}); ok && filepath.Dir(f) == filepath.Clean(p.dir) {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			ours[filepath.Base(f)+suffix] = true
		}
	}
	for _, e := range entries {
		if !ours[e.Name()] || e.IsDir() {
			return false
		}
	}
	for _, e := range entries {
		if os.Remove(filepath.Join(p.dir, e.Name())) != nil {
			return false
		}
	}
	if os.Remove(p.dir) != nil {
		return false
	}
	if p.madeParent != "" {
		_ = os.Remove(p.madeParent) // only when empty: other runs' directories stay
	}
	fmt.Fprintf(stderr, "scalelab: the run did not start; its results directory %s is removed\n", p.dir)
	return true
}

// newDoc is run.json as it is written at the start: status running.
func (p *Plan) newDoc() *results.Run {
	f := p.flags
	return &results.Run{
		Scalelab: results.Version{Version: results.BuildVersion(), Go: runtime.Version()},
		Status:   results.StatusRunning,
		Command:  redactArgs(f.Args),
		SLO:      f.SLO,
		Scenario: p.scen.Name(),
		Engine:   p.eng.Name(),
		Settings: redactSettings(p.settings.Map()),
		Changed:  p.settings.Changed(),
		Load: results.Load{Model: p.model.Name(), Open: p.model.Open(), Params: p.model.Params(), DurationS: p.opts.Duration.Seconds(),
			WarmupS: f.Warmup.Seconds(), Ops: p.opts.Ops, Seed: p.opts.Seed},
		Segment: p.segmentDoc(),
		Host:    results.HostFacts(),
		Start:   time.Now().UTC(),
		Summary: map[string]metrics.OpSummary{},
		Files:   []string{results.RunFile},
	}
}

// announce says on stderr what runs where, and when the run ends.
func (p *Plan) announce(stderr io.Writer) {
	f := p.flags
	on := p.eng.Name()
	for _, t := range p.tiers {
		on += fmt.Sprintf(" (%s: %s)", t.role, t.eng.Name())
	}
	model := p.model.Name() + " model"
	if f.Segment.Split() {
		model += ", segment " + f.Segment.String()
	}
	fmt.Fprintf(stderr, "scalelab %s: %s on %s, %s, results in %s\n", results.BuildVersion(), p.scen.Name(), on, model, p.dir)
	if f.LoadOnly {
		return
	}
	end := "scalelab: the run ends after " + load.Bound(p.opts)
	if t, ok := p.model.(*load.Threads); ok && t.Loops > 0 {
		end = "scalelab: the run ends " + t.Bound(p.opts)
	}
	if p.opts.Ops > 0 {
		end += " (its time is estimated once the rate is known)"
	}
	fmt.Fprintln(stderr, end)
}

// engineConfig is how the store's engine connects: the target, or the
// local cluster, which run.json then names (and which records the run).
func (p *Plan) engineConfig(doc *results.Run) engine.Config {
	cfg := engine.Config{Target: p.flags.Target, Settings: p.settings, Dir: p.dir, Cluster: p.cluster,
		Scenario: p.scen.Name(), Run: filepath.Base(p.dir)}
	if p.cluster != nil {
		cfg.Target = p.cluster.Target
		doc.Cluster = &results.ClusterRef{Name: p.cluster.Name, Nodes: len(p.cluster.Nodes), Params: p.cluster.Params}
		// an older run's `scalelab audit DIR` learns from this that the
		// cluster's data may have changed since
		if err := p.cluster.RecordRun(doc.Start, p.dir); err != nil {
			doc.Warnings = append(doc.Warnings, err.Error())
		}
	}
	return cfg
}

// Execute runs the plan: creates the results directory, connects, loads the
// data, measures, and writes run.json (with its final status and exit code
// whatever happens), report.html and the terminal summary to stdout;
// progress goes to obs. The returned document is nil only when the results
// directory could not be created, a node the run needs is not running, or
// the run was refused as a configuration error (exit 2) before it measured
// anything, in which case its results directory is removed.
// The error carries the exit code.
func (p *Plan) Execute(ctx context.Context, obs Observer, stdout, stderr io.Writer) (*results.Run, error) {
	// a node may have died since the plan was made
	if err := p.checkRunning(); err != nil {
		return nil, err
	}
	doc, err := p.execute(ctx, obs, stdout, stderr)
	return doc, err
}

func (p *Plan) execute(ctx context.Context, obs Observer, stdout, stderr io.Writer) (*results.Run, error) {
	f := p.flags
	ctx = wait.WithOutput(ctx, stderr) // the engines' waits (indexes, replicas) announce themselves there
	// here rather than in NewPlan: an experiment's plans are checked
	// before their clusters exist
	if err := CheckServer(p.eng.Name(), f.Target, p.cluster != nil); err != nil {
		return nil, err
	}
	doc, st, err := p.start(stderr)
	if err != nil {
		return doc, err
	}
	if obs == nil {
		obs = Quiet{}
	}
	// a run refused before it measured anything leaves no directory
	finish := func(status string, err error) (*results.Run, error) {
		doc, err := st.finish(status, err)
		if p.discardUnstarted(err, stderr) {
			return nil, err
		}
		return doc, err
	}

	cfg := p.engineConfig(doc)
	conn, err := p.eng.Open(ctx, cfg)
	if err != nil {
		return finish(results.StatusFailed, results.WithCode(ConnectExitCode(err), fmt.Errorf("connect to %s: %w", p.eng.Name(), err)))
	}
	defer conn.Close()
	serverInfo(ctx, conn, doc)
	tiers, closeTiers, err := p.openTiers(ctx, doc)
	if err != nil {
		return finish(results.StatusFailed, err)
	}
	defer closeTiers()
	// run.json now names the cluster and the server: a run that dies from
	// here on can be rebuilt and audited (`scalelab audit DIR`)
	if err := st.save(); err != nil {
		return finish(results.StatusFailed, results.WithCode(results.ExitUnfinished, err))
	}
	wl, err := p.scen.Open(ctx, scenario.Env{Engine: p.eng.Name(), Conn: conn, Settings: p.settings, Seed: f.Seed, Tiers: tiers, Segment: f.Segment})
	if err != nil {
		if errors.Is(err, setting.ErrBadValue) || errors.Is(err, scenario.ErrEngineNotSupported) || errors.Is(err, engine.ErrConfig) {
			return finish(results.StatusFailed, results.WithCode(results.ExitUsage, err))
		}
		return finish(results.StatusFailed, results.WithCode(results.ExitUnfinished, fmt.Errorf("open scenario %s: %w", p.scen.Name(), err)))
	}
	defer wl.Close()

	if status, err := p.loadPhase(ctx, wl, obs, doc); err != nil {
		return finish(status, err)
	}
	if f.LoadOnly {
		fmt.Fprintf(stdout, "loaded %d items; results in %s\n", doc.LoadPhase.Items, p.dir)
		return finish(results.StatusOK, nil)
	}

	// With --fault, the wait for the cluster to be healthy again ends in
	// the observer's RunDone, inside measure: before every post-run check
	// (the scenario's Checker, the audit's read-back).
	obs = p.withFaults(ctx, obs, doc, stderr)
	aud, err := p.startAudit(wl, doc, stderr)
	if err != nil {
		return finish(results.StatusFailed, err)
	}
	p.auditCounts = auditCountsOf(aud)
	if err := p.waitStart(ctx, doc, stderr); err != nil {
		aud.close()
		return finish(results.StatusInterrupted, results.WithCode(results.ExitInterrupted, err))
	}
	appBefore, appErr := p.appStats(ctx)
	status, err := p.measure(ctx, aud.wrap(wl, classifiers(conn, tiers)), st, obs, telemetrySources(conn, tiers))
	p.waitAppIdle(ctx, doc, stderr)
	p.recordApp(ctx, doc, appBefore, appErr)
	if err != nil {
		aud.close()
		return finish(results.StatusFailed, err)
	}
	if ar, ok := conn.(engine.AfterRunner); ok && doc.Server != nil {
		doc.Server.After = ar.AfterRun(ctx)
	}
	// The acknowledged-write audit reads every write back: after the load
	// ends and after the cluster is healthy again. A read-back that cannot
	// finish (exit 4) still gets the report and the summary.
	auditErr := aud.finish(ctx, doc, status == results.StatusInterrupted, stderr)
	if (len(doc.Failures) > 0 || auditErr != nil) && status == results.StatusOK {
		status = results.StatusFailed
		if results.ExitCode(auditErr) == results.ExitInterrupted {
			status = results.StatusInterrupted
		}
	}
	doc.Status = status
	doc.ExitCode = map[string]int{results.StatusOK: results.ExitOK, results.StatusFailed: results.ExitCheckFailed, results.StatusInterrupted: results.ExitInterrupted}[status]
	p.writeReports(stdout, doc)
	return finish(status, auditErr)
}

// start creates the results directory and its run.json (status
// running), and says on stderr what runs where.
func (p *Plan) start(stderr io.Writer) (*results.Run, *runState, error) {
	if err := p.createDir(); err != nil {
		return nil, nil, err
	}
	doc := p.newDoc()
	st := &runState{doc: doc, path: filepath.Join(p.dir, results.RunFile)}
	if err := st.save(); err != nil {
		return doc, nil, err
	}
	p.stderr = stderr
	p.warnDeadNodes(doc, stderr)
	p.announce(stderr)
	return doc, st, nil
}

// serverInfo records in run.json what the server says it is, or why it
// could not say.
func serverInfo(ctx context.Context, conn engine.Conn, doc *results.Run) {
	info, err := conn.Info(ctx)
	if err != nil {
		doc.Warnings = append(doc.Warnings, "server info unavailable: "+err.Error())
		return
	}
	doc.Server = &results.Server{Version: info.Version, Product: info.Product, Target: redactTarget(info.Target), Extra: info.Extra}
}

// writeReports writes report.html and the terminal summary.
func (p *Plan) writeReports(stdout io.Writer, doc *results.Run) {
	if err := report.WriteHTML(filepath.Join(p.dir, results.ReportFile), doc, p.dir); err != nil {
		doc.Warnings = append(doc.Warnings, "report.html: "+err.Error())
	} else {
		doc.Files = append(doc.Files, results.ReportFile)
	}
	sort.Strings(doc.Files)
	report.Terminal(stdout, doc)
	report.TerminalApp(stdout, doc)
	report.TerminalTransactions(stdout, doc)
	report.TerminalFaults(stdout, doc)
	report.TerminalAudit(stdout, doc)
	fmt.Fprintf(stdout, "results: %s\n", p.dir)
}

// loadPhase loads the scenario's data, recording the load phase in
// run.json; when it fails, it returns the run's status and error.
func (p *Plan) loadPhase(ctx context.Context, wl scenario.Workload, obs Observer, doc *results.Run) (string, error) {
	lp, err := p.loadData(ctx, wl, obs)
	if lp != nil || err != nil {
		doc.LoadPhase = lp
	}
	switch {
	case err == nil:
		return "", nil
	case ctx.Err() != nil:
		return results.StatusInterrupted, results.WithCode(results.ExitInterrupted, fmt.Errorf("interrupted while loading data: %w", err))
	}
	if errors.Is(err, engine.ErrConfig) { // an object of scalelab's name it did not create (engine.ErrNotOwned)
		return results.StatusFailed, results.WithCode(results.ExitUsage, fmt.Errorf("load data: %w", err))
	}
	return results.StatusFailed, results.WithCode(results.ExitUnfinished, fmt.Errorf("load data: %w", err))
}

// loadData runs the scenario's load phase with a progress bar.
func (p *Plan) loadData(ctx context.Context, wl scenario.Workload, obs Observer) (*results.LoadPhase, error) {
	n := wl.LoadSize()
	if n == 0 {
		return nil, nil
	}
	start := time.Now()
	obs.DataLoadStarted(n)
	var loaded atomic.Int64
	err := wl.Load(ctx, runtime.GOMAXPROCS(0)*2, func(k int64) { loaded.Add(k); obs.DataLoaded(k) })
	obs.DataLoadDone()
	secs := time.Since(start).Seconds()
	lp := &results.LoadPhase{Items: loaded.Load(), Seconds: secs}
	if secs > 0 {
		lp.PerS = float64(lp.Items) / secs
	}
	return lp, err
}
