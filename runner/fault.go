package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/fault"
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// DefaultRecoveryWait bounds the wait after the load, with faults, for the
// cluster to be healthy again before the post-run checks.
const DefaultRecoveryWait = 3 * time.Minute

// CacheRecoveryWait is that bound when the faults hit a cache tier in
// front of an embedded store: the post-run checks read the store, which
// the faults did not touch, so the wait only measures the cache's
// recovery, and a killed cache server (never back) does not hold the run.
const CacheRecoveryWait = 10 * time.Second

// planFaults parses and validates --fault against the cluster and the run
// (usage errors, exit code 2).
func planFaults(f *Options, cl *cluster.State, runFor time.Duration) ([]fault.Spec, error) {
	if len(f.Faults) == 0 {
		return nil, nil
	}
	specs, err := fault.ParseList(f.Faults)
	if err != nil {
		return nil, results.UsageErr("--fault: %v", err)
	}
	if f.LoadOnly {
		return nil, results.UsageErr("--fault: a --load-only run has no load to inject faults into")
	}
	if err := fault.Validate(specs, cl, runFor); err != nil {
		return nil, results.WithCode(results.ExitUsage, err)
	}
	if f.RecoveryWait < 0 {
		return nil, results.UsageErr("--recovery-wait %s must not be negative", f.RecoveryWait)
	}
	return specs, nil
}

// faultObserver runs the fault session of a run beside the observer it
// wraps: the session starts with the load (its t = 0 is the collector's),
// and when the load ends it lifts remaining stops, waits (bounded, with
// progress on stderr) for the cluster to be healthy again and writes the
// faults, events and recovery into run.json. That wait ends inside
// RunDone, so it comes before every post-run check (the scenario's Checker,
// the audit's read-back).
type faultObserver struct {
	Observer
	ctx    context.Context
	p      *Plan
	doc    *results.Run
	stderr io.Writer
	sess   *fault.Session
	log    *os.File // faults.log: every event and fault change as it happens

	mu  sync.Mutex // guards ivs (Interval runs on the collector goroutine)
	ivs []errInterval
}

// withFaults wraps obs when the plan has faults.
func (p *Plan) withFaults(ctx context.Context, obs Observer, doc *results.Run, stderr io.Writer) Observer {
	if len(p.faults) == 0 || p.faultCluster() == nil {
		return obs
	}
	return &faultObserver{Observer: obs, ctx: ctx, p: p, doc: doc, stderr: stderr}
}

// RunStarted starts the fault session with the load.
func (o *faultObserver) RunStarted(opts load.Options, run *load.Run, coll *metrics.Collector) {
	o.Observer.RunStarted(opts, run, coll)
	cfg := fault.Config{}
	if f, err := os.OpenFile(filepath.Join(o.p.dir, results.FaultsLogFile), os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644); err != nil {
		o.doc.Warnings = append(o.doc.Warnings, "faults.log: "+err.Error())
	} else {
		o.log, cfg.Log = f, f
		o.doc.Files = append(o.doc.Files, results.FaultsLogFile)
	}
	o.sess = fault.Start(o.p.faultCluster(), o.p.faults, coll.StartTime(), cfg)
}

// RunDone ends the session: lifts stops, waits for health, records.
func (o *faultObserver) RunDone() {
	o.Observer.RunDone()
	if o.sess == nil {
		return
	}
	o.sess.EndLoad()
	bound := o.p.flags.RecoveryWait
	switch {
	case bound == 0 && o.p.faultCluster() != o.p.cluster && o.p.app == nil:
		bound = CacheRecoveryWait
	case bound == 0:
		bound = DefaultRecoveryWait
	}
	fmt.Fprintf(o.stderr, "faults: waiting up to %s for cluster %s to be healthy (green) before the post-run checks\n", bound, o.p.faultCluster().Name)
	var last time.Duration
	waited, ok := o.sess.WaitHealthy(o.ctx, bound, func(w time.Duration, h cluster.Health) {
		if w-last >= 5*time.Second {
			fmt.Fprintf(o.stderr, "faults: cluster %s after %s of %s\n", h, w.Round(time.Second), bound)
			last = w
		}
	})
	faults, events, rec := o.sess.Close(waited, !ok && o.ctx.Err() == nil)
	o.sess = nil
	if o.log != nil {
		if err := o.log.Close(); err != nil {
			o.doc.Warnings = append(o.doc.Warnings, "faults.log: "+err.Error())
		}
	}
	o.mu.Lock()
	for i := range faults {
		if at := faults[i].InjectedS; at != nil {
			faults[i].Before = o.window(*at-results.ErrorWindowS, *at)
			faults[i].After = o.window(*at, *at+results.ErrorWindowS)
		}
	}
	o.mu.Unlock()
	o.doc.Faults, o.doc.Events, o.doc.Recovery = faults, events, rec
	switch {
	case ok:
		fmt.Fprintf(o.stderr, "faults: cluster healthy after %s: %s\n", waited.Round(100*time.Millisecond), rec.Health)
	case rec.TimedOut:
		o.doc.Warnings = append(o.doc.Warnings, fmt.Sprintf("the cluster was not healthy %s after the load ended (%s); the post-run checks ran anyway (--recovery-wait sets the bound)", bound, rec.Health))
	}
	for _, f := range faults {
		if f.Outcome == "failed" {
			o.doc.Warnings = append(o.doc.Warnings, fmt.Sprintf("fault %s failed: %s", f.Spec, f.Error))
		}
	}
}

// errInterval is one closed interval's outcome counts, for the error
// windows around each fault.
type errInterval struct {
	startS, endS float64
	ok           int64
	errs         [metrics.NumClasses]int64
}

// Interval passes the interval on and keeps its counts.
func (o *faultObserver) Interval(iv *metrics.Interval) error {
	e := errInterval{startS: float64(iv.StartNs) / 1e9, endS: float64(iv.EndNs) / 1e9}
	for i := range iv.Ops {
		e.ok += iv.Ops[i].Count()
		for c, n := range iv.Ops[i].Errs {
			e.errs[c] += n
		}
	}
	o.mu.Lock()
	o.ivs = append(o.ivs, e)
	o.mu.Unlock()
	return o.Observer.Interval(iv)
}

// window sums the intervals that end in (from, to]: the interval in which
// a fault happens ends after it and counts in the window after it.
func (o *faultObserver) window(from, to float64) *results.ErrorWindow {
	w := &results.ErrorWindow{FromS: max(from, 0), ToS: to}
	for _, iv := range o.ivs {
		if iv.endS <= from || iv.endS > to {
			continue
		}
		w.OK += iv.ok
		for c, n := range iv.errs {
			if n > 0 && metrics.Class(c) != metrics.OK {
				if w.ByClass == nil {
					w.ByClass = map[string]int64{}
				}
				w.ByClass[metrics.Class(c).String()] += n
				w.Errors += n
			}
		}
	}
	return w
}
