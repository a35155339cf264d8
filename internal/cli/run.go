package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// runPlan is a validated run: everything resolved before anything starts.
type runPlan struct {
	flags    *runFlags
	scen     scenario.Scenario
	eng      engine.Engine
	settings *setting.Set
	model    load.Model
	opts     load.Options
	dir      string
	cluster  *cluster.State // --cluster
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p, err := planRun(args)
	if err != nil {
		return err
	}
	return p.execute(ctx, stdout, stderr)
}

// planRun resolves scenario, engine, settings and load model, reporting
// every bad input as a usage error.
func planRun(args []string) (*runPlan, error) {
	f, given, scenName, err := parseRunArgs(args)
	if err != nil {
		return nil, err
	}
	scen, err := scenario.Lookup(scenName)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	eng, err := engine.Lookup(f.engine)
	if err != nil {
		return nil, usageErr("--engine: %v", err)
	}
	if !scenario.Supports(scen, eng.Name()) {
		return nil, usageErr("scenario %s has no storage for engine %s; it supports: %s", scen.Name(), eng.Name(), strings.Join(scen.Engines(), ", "))
	}
	set := setting.NewSet(append(append([]setting.Spec{}, eng.Settings()...), scen.Settings()...)...)
	for _, s := range f.sets {
		if err := applySetting(set, s, eng.Name(), scen.Name()); err != nil {
			return nil, withCode(ExitUsage, err)
		}
	}
	model, opts, err := buildModel(f, given)
	if err != nil {
		return nil, err
	}
	var cl *cluster.State
	if f.cluster != "" {
		if f.target != "" {
			return nil, usageErr("run: --cluster and --target are exclusive")
		}
		if cl, err = cluster.Load(f.cluster); err != nil {
			return nil, usageErr("--cluster: %v", err)
		}
		if cl.Engine != eng.Name() {
			return nil, usageErr("--cluster %s is a %s cluster, but this run uses --engine %s", cl.Name, cl.Engine, eng.Name())
		}
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("scalelab-results", fmt.Sprintf("%s-%s-%s", scen.Name(), eng.Name(), time.Now().Format("20060102-150405")))
	}
	return &runPlan{flags: f, scen: scen, eng: eng, settings: set, model: model, opts: opts, dir: dir, cluster: cl}, nil
}

// applySetting applies one --set, explaining keys that belong to an engine
// or scenario other than the ones in use.
func applySetting(set *setting.Set, assignment, engName, scenName string) error {
	key, _, _ := strings.Cut(assignment, "=")
	key = strings.TrimSpace(key)
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
func buildModel(f *runFlags, given map[string]bool) (load.Model, load.Options, error) {
	name := f.model
	if name == "" {
		switch {
		case given["phases"]:
			name = "phases"
		case given["rate"]:
			name = "rate"
		default:
			name = "closed"
		}
	}
	if err := f.checkConflicts(name, given); err != nil {
		return nil, load.Options{}, err
	}
	opts := load.Options{Duration: f.duration, Ops: f.ops, Seed: f.seed, Drain: f.drain}
	if f.warmup < 0 {
		return nil, opts, usageErr("run: --warmup %s must not be negative", f.warmup)
	}
	think, err := load.ParseThink(f.think)
	if err != nil {
		return nil, opts, withCode(ExitUsage, err)
	}
	var m load.Model
	switch name {
	case "closed":
		users := f.users
		if !given["users"] {
			users = 8
		}
		m = &load.Closed{Users: users, Think: think}
	case "rate":
		if f.rate == "" {
			return nil, opts, usageErr("run: the rate model needs --rate, e.g. --rate 5000/s")
		}
		r, err := load.ParseRate(f.rate)
		if err != nil {
			return nil, opts, withCode(ExitUsage, err)
		}
		workers := f.users
		if !given["users"] {
			workers = 32
		}
		m = &load.Rate{Rate: r, Arrivals: f.arrivals, Workers: workers}
	case "phases":
		if f.phases == "" {
			return nil, opts, usageErr("run: the phases model needs --phases, e.g. --phases 30s@1/s,30s@2/s")
		}
		ph, err := load.ParsePhases(f.phases)
		if err != nil {
			return nil, opts, withCode(ExitUsage, err)
		}
		pm := &load.Phases{Phases: ph, Think: think}
		if opts.Duration == 0 {
			opts.Duration = pm.Total()
		}
		m = pm
	default:
		return nil, opts, usageErr("run: --model %q; allowed: closed|rate|phases", name)
	}
	if err := m.Validate(); err != nil {
		return nil, opts, withCode(ExitUsage, err)
	}
	if opts.Duration == 0 && opts.Ops == 0 {
		opts.Duration = 10 * time.Second
	}
	if opts.Duration > 0 && f.warmup >= opts.Duration {
		return nil, opts, usageErr("run: --warmup %s leaves nothing to measure in a %s run", f.warmup, opts.Duration)
	}
	return m, opts, nil
}

// runState accumulates run.json as the run goes.
type runState struct {
	doc  *results.Run
	path string
}

func (s *runState) save() error { return results.WriteJSON(s.path, s.doc) }

func (p *runPlan) execute(ctx context.Context, stdout, stderr io.Writer) (retErr error) {
	f := p.flags
	if err := results.Create(p.dir); err != nil {
		return withCode(ExitUsage, err)
	}
	doc := &results.Run{
		Scalelab: results.Version{Version: Version(), Go: runtime.Version()},
		Status:   results.StatusRunning,
		Command:  redactArgs(os.Args),
		Scenario: p.scen.Name(),
		Engine:   p.eng.Name(),
		Settings: p.settings.Map(),
		Changed:  p.settings.Changed(),
		Load: results.Load{Model: p.model.Name(), Params: p.model.Params(), DurationS: p.opts.Duration.Seconds(),
			WarmupS: f.warmup.Seconds(), Ops: p.opts.Ops, Seed: p.opts.Seed},
		Host:    results.HostFacts(),
		Start:   time.Now().UTC(),
		Summary: map[string]metrics.OpSummary{},
		Files:   []string{results.RunFile},
	}
	st := &runState{doc: doc, path: filepath.Join(p.dir, results.RunFile)}
	if err := st.save(); err != nil {
		return err
	}
	ui := newProgress(stderr, f.progress)
	fmt.Fprintf(stderr, "scalelab %s: %s on %s, %s model, results in %s\n", Version(), p.scen.Name(), p.eng.Name(), p.model.Name(), p.dir)

	// finish records the outcome in run.json whatever happened.
	finish := func(status string, err error) error {
		code := ExitCode(err)
		if err == nil && status == results.StatusFailed {
			code = ExitCheckFailed
		}
		if status == results.StatusInterrupted {
			code = ExitInterrupted
		}
		doc.Status, doc.ExitCode = status, code
		if err != nil {
			doc.Error = err.Error()
		}
		end := time.Now().UTC()
		doc.End = &end
		if werr := st.save(); werr != nil && err == nil {
			return werr
		}
		if err == nil && code != ExitOK {
			return &ExitError{Code: code, Err: errReported}
		}
		return err
	}

	cfg := engine.Config{Target: f.target, Settings: p.settings, Dir: p.dir, Cluster: p.cluster}
	if p.cluster != nil {
		cfg.Target = p.cluster.Target
		doc.Cluster = &results.ClusterRef{Name: p.cluster.Name, Nodes: len(p.cluster.Nodes), Params: p.cluster.Params}
	}
	conn, err := p.eng.Open(ctx, cfg)
	if err != nil {
		return finish(results.StatusFailed, withCode(ExitUnfinished, fmt.Errorf("connect to %s: %w", p.eng.Name(), err)))
	}
	defer conn.Close()
	if info, err := conn.Info(ctx); err == nil {
		doc.Server = &results.Server{Version: info.Version, Target: redactTarget(info.Target), Extra: info.Extra}
	} else {
		doc.Warnings = append(doc.Warnings, "server info unavailable: "+err.Error())
	}
	wl, err := p.scen.Open(ctx, scenario.Env{Engine: p.eng.Name(), Conn: conn, Settings: p.settings, Seed: f.seed})
	if err != nil {
		if errors.Is(err, setting.ErrBadValue) || errors.Is(err, scenario.ErrEngineNotSupported) {
			return finish(results.StatusFailed, withCode(ExitUsage, err))
		}
		return finish(results.StatusFailed, withCode(ExitUnfinished, fmt.Errorf("open scenario %s: %w", p.scen.Name(), err)))
	}
	defer wl.Close()

	if lp, err := p.loadData(ctx, wl, ui); lp != nil || err != nil {
		doc.LoadPhase = lp
		if err != nil {
			if ctx.Err() != nil {
				return finish(results.StatusInterrupted, withCode(ExitInterrupted, fmt.Errorf("interrupted while loading data: %w", err)))
			}
			return finish(results.StatusFailed, withCode(ExitUnfinished, fmt.Errorf("load data: %w", err)))
		}
	}
	if f.loadOnly {
		fmt.Fprintf(stdout, "loaded %d items; results in %s\n", doc.LoadPhase.Items, p.dir)
		return finish(results.StatusOK, nil)
	}

	status, err := p.measure(ctx, wl, st, ui)
	if err != nil {
		return finish(results.StatusFailed, err)
	}
	doc.Status = status
	doc.ExitCode = map[string]int{results.StatusOK: ExitOK, results.StatusFailed: ExitCheckFailed, results.StatusInterrupted: ExitInterrupted}[status]
	if err := report.WriteHTML(filepath.Join(p.dir, results.ReportFile), doc, p.dir); err != nil {
		doc.Warnings = append(doc.Warnings, "report.html: "+err.Error())
	} else {
		doc.Files = append(doc.Files, results.ReportFile)
	}
	sort.Strings(doc.Files)
	report.Terminal(stdout, doc)
	fmt.Fprintf(stdout, "results: %s\n", p.dir)
	return finish(status, nil)
}

// loadData runs the scenario's load phase with a progress bar.
func (p *runPlan) loadData(ctx context.Context, wl scenario.Workload, ui *progress) (*results.LoadPhase, error) {
	n := wl.LoadSize()
	if n == 0 {
		return nil, nil
	}
	start := time.Now()
	ui.startLoad(n)
	err := wl.Load(ctx, runtime.GOMAXPROCS(0)*2, ui.loaded)
	ui.endLoad()
	secs := time.Since(start).Seconds()
	lp := &results.LoadPhase{Items: ui.loadedCount(), Seconds: secs}
	if secs > 0 {
		lp.PerS = float64(lp.Items) / secs
	}
	return lp, err
}
