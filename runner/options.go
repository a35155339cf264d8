// Package runner executes one run end to end: it resolves a scenario, an
// engine, settings and a load model into a Plan, then connects, loads the
// data, measures and writes the results directory. The command line and
// experiments both run through it.
package runner

import (
	"strings"
	"time"

	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/segment"
)

// Options describe a run as a user states it (the flags of `scalelab run`).
type Options struct {
	Scenario   string
	Engine     string        // default sqlite
	Target     string        // engine target; exclusive with Cluster
	Cluster    string        // a local cluster started with `scalelab cluster up`
	Tiers      []TierOptions // connections beside the store, by role (--cache ...)
	Model      string        // closed, rate, phases or threads; "" infers from Rate/Phases/RampUp/Loops
	Users      int           // closed, threads: virtual users; rate: operations in flight
	Think      string        // think time spec
	Duration   time.Duration // 0: default 10 s unless Ops or Phases bound the run
	Ops        int64         // total operations shared by all users
	Rate       string        // rate model: e.g. 5000/s
	Arrivals   string        // rate model: constant or poisson
	Phases     string        // phases model: 30s@1/s,...
	RampUp     time.Duration // threads model: users start evenly over it
	Loops      int           // threads model: loops per user; 0 until --duration or --ops
	Warmup     time.Duration
	Seed       uint64
	Samples    bool
	Out        string   // results directory; "" for a generated name
	Sets       []string // key=value settings
	LoadOnly   bool
	Drain      time.Duration
	CPUProfile string
	// NoAudit turns the acknowledged-write audit off (docs/audit.md); it
	// is on by default for scenarios that support it.
	NoAudit bool
	// SLO holds service-level objectives (slo syntax, e.g.
	// "p95<1s"); a failed one is a run.json failure and exit code 1.
	SLO []string
	// Faults are fault specs (package fault: kill:node2@60s, ...) to inject
	// into the --cluster during the run.
	Faults []string
	// RecoveryWait bounds the wait after the load for the cluster to be
	// healthy again when there are faults; 0 means DefaultRecoveryWait.
	RecoveryWait time.Duration
	// Given names the options the user set explicitly (flag names: users,
	// think, rate, arrivals, phases, ramp-up, loops); defaults depend on it.
	Given map[string]bool
	// Segment is the share of a divided test this run is (--segment I/N;
	// zero: the whole test); package segment says how a test is divided.
	Segment segment.Segment
	// Telemetry is how often the processes of the run's tiers are
	// sampled (package telemetry); 0 means every second, negative off.
	Telemetry time.Duration
	// TelemetrySource is an external system the tiers' figures are read
	// from (--telemetry-source prometheus=URL; package promsource).
	TelemetrySource string
	// Observe maps tiers to that source's series (--observe
	// TIER=SELECTOR, TIER.exporter=..., TIER.cpus=N, or a YAML file).
	Observe []string
	// MetricsListen is the address the run's live figures are served
	// at for Prometheus to scrape (--metrics-listen; package liveexport).
	MetricsListen string
	// MetricsPush is a Prometheus remote-write URL the live figures are
	// pushed to every few seconds (--metrics-push).
	MetricsPush string
	// StartAt is the wall-clock instant the load starts at (--start-at),
	// the same for every segment; zero: at once.
	StartAt time.Time
	// Args is the command line recorded in run.json (secrets redacted).
	Args []string
}

// checkConflicts rejects options that belong to another load model.
func (f *Options) checkConflicts(model string, given map[string]bool) error {
	for _, name := range []string{"think", "rate", "arrivals", "phases", "users", "ramp-up", "loops"} {
		if !given[name] {
			continue
		}
		models := load.ModelsWithFlag(name)
		ok := false
		for _, m := range models {
			ok = ok || m == model
		}
		if !ok {
			return results.UsageErr("run: --%s does not apply to the %s model (it is for: %s)", name, model, strings.Join(models, ", "))
		}
	}
	return nil
}

// Observer follows a run: the data load's progress (DataLoad*: the
// loading of the scenario's data, not the load model), then every closed
// interval (it is a metrics.Sink, called from the collector goroutine).
type Observer interface {
	metrics.Sink
	DataLoadStarted(total int64)
	DataLoaded(n int64)
	DataLoadDone()
	RunStarted(opts load.Options, run *load.Run, coll *metrics.Collector)
	RunDone()
}

// Quiet is an Observer that shows nothing.
type Quiet struct{}

// Interval does nothing.
func (Quiet) Interval(*metrics.Interval) error { return nil }

// DataLoadStarted does nothing.
func (Quiet) DataLoadStarted(int64) {}

// DataLoaded does nothing.
func (Quiet) DataLoaded(int64) {}

// DataLoadDone does nothing.
func (Quiet) DataLoadDone() {}

// RunStarted does nothing.
func (Quiet) RunStarted(load.Options, *load.Run, *metrics.Collector) {}

// RunDone does nothing.
func (Quiet) RunDone() {}
