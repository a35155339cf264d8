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

// measure runs the load model with the collector and its streamed files,
// then fills the summary, the checks and the status into the document.
func (p *Plan) measure(ctx context.Context, wl scenario.Workload, st *runState, obs Observer, sources []telemetry.Source) (string, error) {
	doc := st.doc
	ops := wl.Operations()
	phases, _ := p.model.(*load.Phases) // nil for the other models
	coll0 := metrics.Config{Ops: ops, Open: p.model.Open(), Samples: p.flags.Samples, Warmup: p.flags.Warmup}
	// the tiers' server stats before the load, then after it (tierstats.go);
	// sampled before t = 0 of the streamed files is taken
	tstats := sampleTierStats(ctx, sources)
	start := time.Now()
	if doc.Segment != nil {
		t := start.UTC()
		doc.Segment.LoadStart = &t
	}
	hlog, err := metrics.NewHlogSink(filepath.Join(p.dir, results.HlogFile), start)
	if err != nil {
		return "", err
	}
	series, err := metrics.NewSeriesSink(filepath.Join(p.dir, results.SeriesFile))
	if err != nil {
		return "", err
	}
	tx := newTxSink(phases)
	sinks := []metrics.Sink{hlog, series, tx, obs}
	closers := []func() error{hlog.Close, series.Close}
	doc.Files = append(doc.Files, results.HlogFile, results.SeriesFile)
	if p.flags.Samples {
		sm, err := metrics.NewSamplesSink(filepath.Join(p.dir, results.SamplesFile), ops)
		if err != nil {
			return "", err
		}
		sinks = append(sinks, sm)
		closers = append(closers, sm.Close)
		doc.Files = append(doc.Files, results.SamplesFile)
	}
	if load.TracksInFlight(p.model) {
		cs, err := metrics.NewConcurrencySink(filepath.Join(p.dir, results.ConcurrencyFile))
		if err != nil {
			return "", err
		}
		coll0.InFlight = metrics.NewInFlight()
		sinks = append(sinks, cs)
		closers = append(closers, cs.Close)
		doc.Files = append(doc.Files, results.ConcurrencyFile)
	}
	live, err := p.startLive(ops, doc)
	if err != nil {
		return "", err
	}
	if live != nil {
		sinks = append(sinks, live.exp)
	}
	coll0.Sinks = sinks
	var tele *telemetry.Sampler
	pc := p.promClient(ctx, doc)
	if p.flags.Telemetry >= 0 {
		tc := telemetry.Config{Nodes: p.telemetryNodes(), Sources: sources, Dir: p.dir, Start: start, Interval: p.telemetryInterval()}
		tc.Windows = phases != nil // judged phase by phase
		if e, ok := p.eng.(engine.Embedded); ok && e.Embedded() {
			tc.EmbeddedStore = p.eng.Name()
		}
		tele, err = telemetry.Start(tc)
		if err != nil {
			return "", err
		}
		doc.Files = append(doc.Files, results.TelemetryFile)
		if len(sources) > 0 {
			doc.Files = append(doc.Files, results.EngineStatsFile)
		}
	}
	var usage results.Usage
	coll0.OnMeasure = func() {
		usage = results.TakeUsage()
		if tele != nil {
			tele.Measure()
		}
	}
	coll := metrics.NewCollector(coll0)
	run, err := load.NewRun(wl, coll, p.model, p.opts)
	if err != nil {
		return "", results.WithCode(results.ExitUsage, err)
	}
	if p.flags.CPUProfile != "" {
		pf, err := os.Create(p.flags.CPUProfile)
		if err != nil {
			return "", results.WithCode(results.ExitUsage, fmt.Errorf("--cpuprofile: %w", err))
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			pf.Close()
			return "", fmt.Errorf("--cpuprofile: %w", err)
		}
		defer func() { pprof.StopCPUProfile(); pf.Close() }()
	}
	coll.Begin()
	if ls, ok := wl.(scenario.LoadStarter); ok {
		ls.LoadStarted(coll.StartTime())
	}
	loadStart := coll.StartTime().UTC()
	doc.LoadStart = &loadStart
	stopColl := make(chan struct{})
	collDone := make(chan error, 1)
	go func() { collDone <- coll.Run(stopColl) }()
	obs.RunStarted(p.opts, run, coll)
	stuck := run.Execute(ctx)
	coll.StopNow()
	cpuAtStop := results.TakeUsage()
	if tele != nil {
		tele.Stop()
		p.observeExternal(ctx, tele, pc, start, doc)
	}
	close(stopColl)
	sinkErr := <-collDone
	live.stop(doc, p)
	tstats.record(ctx, doc)
	obs.RunDone()
	for _, c := range closers {
		if err := c(); err != nil && sinkErr == nil {
			sinkErr = err
		}
	}

	totals, lag, measured := coll.Totals()
	inflight := coll.InFlight()
	summaries := metrics.Summarize(totals, measured, inflight)
	samples := coll.ErrorSamples()
	for i, name := range ops {
		for j := range summaries {
			if summaries[j].Op == name {
				summaries[j].ErrorSamples = samples[i]
			}
		}
	}
	var composites map[string]string
	if c, ok := wl.(scenario.Composites); ok {
		composites = c.Composites()
	}
	for _, s := range summaries {
		s.Composite = composites[s.Op]
		doc.Summary[s.Op] = s
	}
	doc.Totals = results.Sum(doc.Summary)
	if !usage.IsZero() {
		doc.Process = results.ProcessBetween(usage, cpuAtStop, doc.Totals.Started, runtime.NumCPU())
	}
	if tele != nil {
		doc.Telemetry = tele.Summary(doc.Totals.Count)
		if phases != nil {
			doc.Telemetry.Phases = tele.JudgeWindows(coll.StartTime(), phaseWindows(phases))
			telemetry.MarkRepeats(doc.Telemetry)
		}
	}
	doc.MeasuredS = measured.Seconds()
	doc.Intervals = coll.Intervals()
	doc.StopReason = run.StopReason()
	if p.model.Open() {
		ls := metrics.SummarizeLag(lag)
		doc.Lag = &ls
		if ls.Count > 0 {
			var late int64
			for _, s := range summaries {
				late += s.Late
			}
			if frac := float64(late) / float64(ls.Count); frac > 0.01 {
				doc.Warnings = append(doc.Warnings, lagWarning(frac, doc.Process, doc.Telemetry, p.generatorCores(), workersNeeded(p.model, summaries)))
			}
		}
	}
	if phases != nil {
		doc.MaxSessions = coll.MaxSessions()
		doc.Transactions = tx.result(breakRule(p.settings))
	} else {
		doc.Transactions = tx.result(results.BreakRule{})
	}
	if mean, most, ok := coll.InFlightTotals(); ok {
		doc.Concurrency = &results.Concurrency{MeanInFlight: mean, MaxInFlight: most}
		if th, ok := p.model.(*load.Threads); ok {
			doc.Concurrency.Users = th.Users
			doc.MaxSessions = coll.MaxSessions()
		}
	}
	if stuck {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("%d operations were still in flight %s after the stop; they are counted as in_flight", doc.Totals.InFlight, p.opts.Drain))
	}
	if sinkErr != nil {
		return "", fmt.Errorf("write results: %w", sinkErr)
	}

	status := results.StatusOK
	if ctx.Err() != nil {
		status = results.StatusInterrupted
	}
	if rp, ok := wl.(scenario.Reporter); ok {
		doc.ScenarioReport = rp.Report()
	}
	if chk, ok := wl.(scenario.Checker); ok && status == results.StatusOK {
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
