package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/slo"
	"github.com/scalelab/scalelab/telemetry"
)

// measurement is one run's load: the collector, the load run and what
// watches them, from the start of the load to the filled document.
type measurement struct {
	coll      *metrics.Collector
	run       *load.Run
	tele      *telemetry.Sampler // nil with --telemetry off
	phases    *load.Phases       // nil for the other models
	tx        *txSink
	usage     results.Usage // the process's CPU when measuring began (after the warm-up)
	cpuAtStop results.Usage
	stuck     bool // operations were still in flight after the drain
}

// measure runs the load model with the collector and its streamed files,
// then fills the summary, the checks and the status into the document.
func (p *Plan) measure(ctx context.Context, wl scenario.Workload, st *runState, obs Observer, sources []telemetry.Source) (string, error) {
	doc := st.doc
	ops := wl.Operations()
	m := &measurement{}
	m.phases, _ = p.model.(*load.Phases)
	// the tiers' server stats before the load, then after it (tierstats.go);
	// sampled before t = 0 of the streamed files is taken
	tstats := sampleTierStats(ctx, sources)
	start := time.Now()
	if doc.Segment != nil {
		t := start.UTC()
		doc.Segment.LoadStart = &t
	}
	files, err := p.openSinks(ops, m.phases, doc, start, obs)
	if err != nil {
		return "", err
	}
	m.tx = files.tx
	sinks := files.sinks
	live, err := p.startLive(ops, doc)
	if err != nil {
		return "", err
	}
	if live != nil {
		sinks = append(sinks, live.exp)
	}
	pc := p.promClient(ctx, doc)
	if m.tele, err = p.startTelemetry(sources, start, m.phases, doc); err != nil {
		return "", err
	}
	composite := map[string]bool{}
	if c, ok := scenario.Capability[scenario.Composites](wl); ok {
		for op := range c.Composites() {
			composite[op] = true
		}
	}
	m.coll = metrics.NewCollector(metrics.Config{Ops: ops, Open: p.model.Open(), Samples: p.flags.Samples, Warmup: p.flags.Warmup,
		InFlight: files.inFlight, Sinks: sinks, Composite: composite, OnMeasure: func() {
			m.usage = results.TakeUsage()
			if m.tele != nil {
				m.tele.Measure()
			}
		}})
	if m.run, err = load.NewRun(wl, m.coll, p.model, p.opts); err != nil {
		return "", results.WithCode(results.ExitUsage, err)
	}
	stopProfile, err := p.startCPUProfile()
	if err != nil {
		return "", err
	}
	defer stopProfile()

	m.coll.Begin()
	if ls, ok := scenario.Capability[scenario.MeasureStarter](wl); ok {
		ls.MeasureStarted(m.coll.StartTime())
	}
	loadStart := m.coll.StartTime().UTC()
	doc.LoadStart = &loadStart
	stopColl := make(chan struct{})
	collDone := make(chan error, 1)
	obs.RunStarted(p.opts, m.run, m.coll) // before the first interval reaches it
	go func() { collDone <- m.coll.Run(stopColl) }()
	m.stuck = m.run.Execute(ctx)
	m.coll.StopNow()
	m.cpuAtStop = results.TakeUsage()
	if m.tele != nil {
		m.tele.Stop()
		p.observeExternal(ctx, m.tele, pc, start, doc)
	}
	close(stopColl)
	sinkErr := <-collDone
	live.stop(doc, p)
	tstats.record(ctx, doc)
	obs.RunDone()
	for _, c := range files.closers {
		if err := c(); err != nil && sinkErr == nil {
			sinkErr = err
		}
	}

	summaries := p.record(doc, wl, ops, m)
	if sinkErr != nil {
		return "", fmt.Errorf("write results: %w", sinkErr)
	}
	return p.judge(ctx, wl, doc, summaries)
}

// runSinks are the streamed files of a run's collector and what closes
// them.
type runSinks struct {
	sinks    []metrics.Sink
	closers  []func() error
	tx       *txSink
	inFlight *metrics.InFlight // the gauge of operations in flight; nil when the model does not track them
}

// openSinks creates the streamed files (intervals.hlog, series.csv,
// samples.csv with --samples, concurrency.csv for a model that tracks
// operations in flight), naming them in the document, and puts the
// transactions' sink and the observer among them.
func (p *Plan) openSinks(ops []string, phases *load.Phases, doc *results.Run, start time.Time, obs Observer) (*runSinks, error) {
	hlog, err := metrics.NewHlogSink(filepath.Join(p.dir, results.HlogFile), start)
	if err != nil {
		return nil, err
	}
	series, err := metrics.NewSeriesSink(filepath.Join(p.dir, results.SeriesFile))
	if err != nil {
		return nil, err
	}
	f := &runSinks{tx: newTxSink(phases), closers: []func() error{hlog.Close, series.Close}}
	f.sinks = []metrics.Sink{hlog, series, f.tx, obs}
	doc.Files = append(doc.Files, results.HlogFile, results.SeriesFile)
	if p.flags.Samples {
		sm, err := metrics.NewSamplesSink(filepath.Join(p.dir, results.SamplesFile), ops)
		if err != nil {
			return nil, err
		}
		f.sinks = append(f.sinks, sm)
		f.closers = append(f.closers, sm.Close)
		doc.Files = append(doc.Files, results.SamplesFile)
	}
	if load.TracksInFlight(p.model) {
		cs, err := metrics.NewConcurrencySink(filepath.Join(p.dir, results.ConcurrencyFile))
		if err != nil {
			return nil, err
		}
		f.inFlight = metrics.NewInFlight()
		f.sinks = append(f.sinks, cs)
		f.closers = append(f.closers, cs.Close)
		doc.Files = append(doc.Files, results.ConcurrencyFile)
	}
	return f, nil
}

// startTelemetry starts the run's telemetry sampler (nil with --telemetry
// off), naming its files in the document.
func (p *Plan) startTelemetry(sources []telemetry.Source, start time.Time, phases *load.Phases, doc *results.Run) (*telemetry.Sampler, error) {
	if p.flags.Telemetry < 0 {
		return nil, nil
	}
	tc := telemetry.Config{Nodes: p.telemetryNodes(), Sources: sources, Dir: p.dir, Start: start, Interval: p.telemetryInterval()}
	tc.Windows = phases != nil // judged phase by phase
	if e, ok := p.eng.(engine.Embedded); ok && e.Embedded() {
		tc.EmbeddedStore = p.eng.Name()
	}
	tele, err := telemetry.Start(tc)
	if err != nil {
		return nil, err
	}
	doc.Files = append(doc.Files, results.TelemetryFile)
	if len(sources) > 0 {
		doc.Files = append(doc.Files, results.EngineStatsFile)
	}
	return tele, nil
}

// startCPUProfile profiles scalelab itself into --cpuprofile, if given,
// and returns what stops it.
func (p *Plan) startCPUProfile() (func(), error) {
	if p.flags.CPUProfile == "" {
		return func() {}, nil
	}
	pf, err := os.Create(p.flags.CPUProfile)
	if err != nil {
		return nil, results.WithCode(results.ExitUsage, fmt.Errorf("--cpuprofile: %w", err))
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); pf.Close() }, nil
}

// record fills the document from the finished load: the summary per
// operation and its totals, the process's and the tiers' costs, the
// schedule lag of an open model, transactions and phases, operations in
// flight, and the warnings they call for.
func (p *Plan) record(doc *results.Run, wl scenario.Workload, ops []string, m *measurement) []metrics.OpSummary {
	coll := m.coll
	totals, lag, measured := coll.Totals()
	summaries := metrics.Summarize(totals, measured, coll.InFlight())
	samples := coll.ErrorSamples()
	for i, name := range ops {
		for j := range summaries {
			if summaries[j].Op == name {
				summaries[j].ErrorSamples = samples[i]
			}
		}
	}
	var composites map[string]string
	if c, ok := scenario.Capability[scenario.Composites](wl); ok {
		composites = c.Composites()
	}
	for _, s := range summaries {
		s.Composite = composites[s.Op]
		doc.Summary[s.Op] = s
	}
	doc.Totals = results.Sum(doc.Summary)
	if !m.usage.IsZero() {
		doc.Process = results.ProcessBetween(m.usage, m.cpuAtStop, doc.Totals.Started, runtime.NumCPU())
	}
	if m.tele != nil {
		doc.Telemetry = m.tele.Summary(doc.Totals.Count)
		doc.Warnings = append(doc.Warnings, noSampleWarnings(doc.Telemetry)...)
		if m.phases != nil {
			doc.Telemetry.Phases = m.tele.JudgeWindows(coll.StartTime(), phaseWindows(m.phases))
			telemetry.MarkRepeats(doc.Telemetry)
		}
	}
	doc.MeasuredS = measured.Seconds()
	doc.Intervals = coll.Intervals()
	doc.StopReason = m.run.StopReason()
	if p.model.Open() {
		ls := metrics.SummarizeLag(lag)
		doc.Lag = &ls
		if ls.Count > 0 {
			var late int64
			for _, s := range summaries {
				late += s.Late
			}
			if frac := float64(late) / float64(ls.Count); frac > 0.01 {
				doc.Warnings = append(doc.Warnings, lagWarning(frac, doc.Process, doc.Telemetry, runtime.GOMAXPROCS(0), workersNeeded(p.model, summaries)))
			}
		}
	}
	if m.phases != nil {
		doc.MaxSessions = coll.MaxSessions()
		if q := m.phases.Queue(); q.Slots > 0 {
			doc.ClientQueue = &results.ClientQueue{Slots: q.Slots, MaxWaiting: q.MaxWaiting, InProcess: q.InProcess}
			if t := doc.Telemetry; t != nil && t.Saturated == nil && q.MaxWaiting > 0 {
				t.Saturation += "; " + queueVerdict(q.Slots, q.MaxWaiting)
			}
		}
		doc.Transactions = m.tx.result(breakRule(p.settings))
	} else {
		doc.Transactions = m.tx.result(results.BreakRule{})
	}
	if mean, most, ok := coll.InFlightTotals(); ok {
		doc.Concurrency = &results.Concurrency{MeanInFlight: mean, MaxInFlight: most}
		if th, ok := p.model.(*load.Threads); ok {
			doc.Concurrency.Users = th.Users
			doc.MaxSessions = coll.MaxSessions()
		}
	}
	if m.stuck {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("%d operations were still in flight %s after the stop; they are counted as in_flight", doc.Totals.InFlight, p.opts.Drain))
	}
	return summaries
}

// judge runs the scenario's report and post-run check, counts integrity
// errors and SLO misses as failures, and returns the run's status.
func (p *Plan) judge(ctx context.Context, wl scenario.Workload, doc *results.Run, summaries []metrics.OpSummary) (string, error) {
	status := results.StatusOK
	if ctx.Err() != nil {
		status = results.StatusInterrupted
	}
	if rp, ok := scenario.Capability[scenario.Reporter](wl); ok {
		doc.ScenarioReport = rp.Report()
	}
	if chk, ok := scenario.Capability[scenario.Checker](wl); ok && status == results.StatusOK {
		if err := chk.Check(ctx); err != nil {
			if !errors.Is(err, engine.ErrIntegrity) {
				return "", results.WithCode(results.ExitUnfinished, fmt.Errorf("post-run check: %w", err))
			}
			doc.Failures = append(doc.Failures, err.Error())
		}
	}
	for _, s := range summaries {
		if n := s.ErrorsByClass[metrics.Integrity.String()]; n > 0 {
			doc.Failures = append(doc.Failures, fmt.Sprintf("%s: %d integrity errors (the store returned wrong data)", s.Op, n))
		}
	}
	if doc.Totals.Count == 0 && doc.Totals.Errors > 0 && status == results.StatusOK {
		return "", results.WithCode(results.ExitUnfinished, fmt.Errorf("no operation succeeded (%d failed); is the engine reachable?", doc.Totals.Errors))
	}
	if len(p.flags.SLO) > 0 && status == results.StatusOK {
		fails, err := slo.Failures(p.flags.SLO, doc)
		if err != nil {
			return "", results.WithCode(results.ExitUsage, err)
		}
		doc.Failures = append(doc.Failures, fails...)
	}
	if len(doc.Failures) > 0 && status == results.StatusOK {
		status = results.StatusFailed
	}
	return status, nil
}

// phaseWindows are the phases of m as telemetry windows, in seconds since
// the load began.
func phaseWindows(m *load.Phases) []telemetry.Window {
	ws := make([]telemetry.Window, len(m.Phases))
	var at time.Duration
	for i, p := range m.Phases {
		ws[i] = telemetry.Window{Label: p.String(), From: at.Seconds(), To: (at + p.Duration).Seconds()}
		at += p.Duration
	}
	return ws
}

// queueVerdict is what the saturation verdict adds when operations
// waited for the client's slots (load.Queue) though no tier saturated.
func queueVerdict(slots, most int) string {
	what := fmt.Sprintf("%d slots", slots)
	if slots == 1 {
		what = "one slot"
	}
	return fmt.Sprintf("yet operations waited for the client's %s (up to %d at once): while they did, what is behind the client (the store or the app tier) was the limit", what, most)
}
