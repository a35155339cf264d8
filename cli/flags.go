package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/segment"
)

// runFlags are the flags of `scalelab run`.
type runFlags struct {
	engine   string
	target   string
	model    string
	users    int
	think    string
	duration time.Duration
	ops      int64
	rate     string
	arrivals string
	phases   string
	rampUp   time.Duration
	loops    int
	warmup   time.Duration
	seed     uint64
	samples  bool
	out      string
	progress string
	sets     []string
	loadOnly bool
	drain    time.Duration
	cpuprof  string
	audit    bool
	cluster  string
	slo      []string
	faults   []string
	recWait  time.Duration
	cache    string
	cacheTgt string
	cacheCl  string
	app      string
	segment  string
	startAt  string
	tele     string
	teleSrc  string
	observe  []string
	mListen  string
	mPush    string
}

// runLong is the description of `scalelab run`.
const runLong = `Runs SCENARIO (see 'scalelab list scenarios') against an engine under a load model, and writes a
results directory (run.json, intervals.hlog, series.csv, report.html). Flags may stand before or
after SCENARIO. Exit codes: 0 ok, 1 an SLO or check failed (lost writes, wrong answers), 2 bad
usage, 3 interrupted, 4 the run could not finish, 70 internal error.`

// declareRunFlags declares the run flags on c, by help group. A new run
// flag is one line in its group (and a field of runFlags).
func declareRunFlags(c *cobra.Command, f *runFlags) {
	addGroup(c, "Load", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.model, "model", "", "load model: closed|rate|phases|threads (default: phases with --phases, rate with --rate, threads with --ramp-up or --loops, else closed)")
		fs.IntVar(&f.users, "users", 0, "closed, threads: virtual users (default 8); rate: operations that may be in flight at once (default 32)")
		fs.StringVar(&f.think, "think", "", "think time between a user's operations: 2s, uniform 0-5s, exponential exp:2s")
		fs.DurationVar(&f.duration, "duration", 0, "how long to run (default 10s unless --ops or --phases bound the run)")
		fs.Int64Var(&f.ops, "ops", 0, "total operations, shared by all users (0: no limit)")
		fs.StringVar(&f.rate, "rate", "", "rate model: operations per second, e.g. 5000/s")
		fs.StringVar(&f.arrivals, "arrivals", "constant", "rate model arrivals: constant|poisson")
		fs.StringVar(&f.phases, "phases", "", "phases model: session arrival phases, e.g. 30s@1/s,30s@2/s,30s@4/s")
		fs.DurationVar(&f.rampUp, "ramp-up", 0, "threads model: start the users evenly over this time (JMeter's ramp-up period)")
		fs.IntVar(&f.loops, "loops", 0, "threads model: loops per user, each a session (one operation for ycsb and search); the run ends when the last user is done (default 1; 0: until --duration or --ops)")
		fs.DurationVar(&f.warmup, "warmup", 0, "exclude this first part of the run from every figure")
		fs.Uint64Var(&f.seed, "seed", 1, "seed of generated data and random choices (same seed, same data)")
		fs.DurationVar(&f.drain, "drain", time.Second, "at the stop, how long in-flight operations may finish")
		fs.BoolVar(&f.loadOnly, "load-only", false, "load the data and stop, without the measured run")
	})
	addGroup(c, "Engine and tiers", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.engine, "engine", "", "engine to run against (see 'scalelab list'); default: the --cluster's engine, else sqlite")
		fs.StringVar(&f.target, "target", "", "engine target: a file for sqlite, an address for servers (passwords come from the environment, never from here)")
		fs.StringVar(&f.cluster, "cluster", "", "run against a local cluster started with 'scalelab cluster up' (instead of --target)")
		fs.StringArrayVar(&f.sets, "set", nil, "a setting, `KEY=VALUE` (repeatable); 'scalelab list settings' prints them all")
		fs.StringVar(&f.cache, "cache", "", "a cache tier in front of the store: its engine (for scenarios that use one, see 'scalelab list scenarios'); its settings are --set cache.ENGINE.KEY=VALUE")
		fs.StringVar(&f.cacheTgt, "cache-target", "", "the cache tier's target (as --target is the store's)")
		fs.StringVar(&f.cacheCl, "cache-cluster", "", "the cache tier on a local cluster (implies --cache)")
		fs.StringVar(&f.app, "app", "", "drive a web scenario's backend over HTTP at this URL (scalelab serve, or a balancer): sets SCENARIO.app")
	})
	addGroup(c, "Output and checks", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.out, "out", "", "results directory (default scalelab-results/SCENARIO-ENGINE-TIME)")
		fs.StringVar(&f.progress, "progress", "auto", "progress display: auto|bar|lines|off")
		fs.BoolVar(&f.samples, "samples", false, "also write every operation to samples.csv")
		fs.StringVar(&f.tele, "telemetry", "1s", "how often to sample CPU, memory and I/O of every node scalelab started (telemetry.csv), or off")
		fs.StringArrayVar(&f.slo, "slo", nil, "a service-level objective, e.g. 'p95<1s', 'p99<250ms for read', 'errors<1%' (repeatable or comma-separated); a failed one exits 1")
		fs.BoolVar(&f.audit, "audit", true, "log every write in history.log and read the acknowledged ones back after the run; a lost one exits 1 (docs/audit.md); --audit=false turns it off, except with --fault")
		fs.StringVar(&f.cpuprof, "cpuprofile", "", "write a Go CPU profile of scalelab itself to this file (to find generator overhead)")
	})
	addGroup(c, "Monitoring", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.teleSrc, "telemetry-source", "", "read the CPU, memory and exporters' figures of tiers scalelab did not start from a Prometheus server: prometheus=URL (bearer token from SCALELAB_PROMETHEUS_TOKEN or a 0600 file named by SCALELAB_PROMETHEUS_TOKEN_FILE; docs/telemetry.md)")
		fs.StringArrayVar(&f.observe, "observe", nil, "map a tier to that server's series (repeatable): TIER=SELECTOR (its CPU seconds, e.g. app=instance=~\"web.*:9100\" or store=process_cpu_seconds_total{job=\"db\"}), TIER.exporter=SELECTOR, TIER.cpus=N, or a mapping FILE.yaml")
		fs.StringVar(&f.mListen, "metrics-listen", "", "serve the run's live figures for Prometheus to scrape at `HOST:PORT`/metrics, e.g. 127.0.0.1:9464 (docs/live.md)")
		fs.StringVar(&f.mPush, "metrics-push", "", "push the run's live figures every 5 s by Prometheus remote write to this `URL`, e.g. http://prometheus:9090/api/v1/write (bearer token from SCALELAB_METRICS_PUSH_TOKEN)")
	})
	addGroup(c, "Faults", func(fs *pflag.FlagSet) {
		fs.StringArrayVar(&f.faults, "fault", nil, "inject a fault into the --cluster: kill:NODE@T, stop:NODE@T+D (SIGSTOP, SIGCONT after D), restart:NODE@T; with --netns clusters partition:NODE@T+D, partition:A|B@T+D (groups), delay:NODE=200ms@T+D, loss:NODE=10%@T+D; T counts from the start of the load (repeatable; see docs/faults.md)")
		fs.DurationVar(&f.recWait, "recovery-wait", 0, "with --fault: how long to wait after the load for the cluster to be healthy again before the post-run checks (default 3m)")
	})
	addGroup(c, "Many load machines", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.segment, "segment", "", "run the I-th (0-based) of N disjoint shares of the test, as I/N (e.g. 0/4); 'scalelab merge' adds the shares' results into one (docs/segments.md)")
		fs.StringVar(&f.startAt, "start-at", "", "start the load at this wall-clock instant (RFC 3339, e.g. 2026-11-24T10:00:00Z): every segment of a divided test starts at once")
	})
	completeRunFlags(c)
}

// runCmd is `scalelab run`.
func runCmd() *cobra.Command { return newRunCmd(&runFlags{}) }

// newRunCmd is `scalelab run` parsing into f.
func newRunCmd(f *runFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "run a scenario against an engine, write a results directory",
		Long:  runLong,
		Example: `  scalelab run ycsb                                   # YCSB workload A, 8 users, 10 s, on SQLite
  scalelab run ycsb --engine null --users 16 --duration 20s --set ycsb.workload=c
  scalelab run ycsb --rate 5000/s --arrivals poisson --duration 30s
  scalelab run logs --cluster pg1 --slo 'p95<50ms'`,
		Args:              runPositional,
		ValidArgsFunction: completeScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			p, err := f.plan(args[0], givenFlags(c), nil)
			if err != nil {
				return err
			}
			_, err = p.Execute(c.Context(), newProgress(c.ErrOrStderr(), f.progress), c.OutOrStdout(), c.ErrOrStderr())
			return err
		},
	}
	declareRunFlags(c, f)
	return c
}

// runPositional wants one SCENARIO.
func runPositional(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usageErr("run: no scenario given; usage: scalelab run SCENARIO [flags] (see `scalelab list`)")
	}
	if len(args) > 1 {
		if err := setWithoutEquals(c); err != nil {
			return err // the stray word is a setting's value
		}
		return usageErr("run: one scenario expected, got %q; flags go before or after it (--engine null)", args)
	}
	return nil
}

// givenFlags names the flags given on c's command line.
func givenFlags(c *cobra.Command) map[string]bool {
	given := map[string]bool{}
	c.Flags().Visit(func(fl *pflag.Flag) { given[fl.Name] = true })
	return given
}

// parseRunArgs parses `scalelab run` arguments (SCENARIO and run flags,
// in any order) exactly as the run command does: the same flags, errors
// and checks of the scenario's arity.
func parseRunArgs(args []string) (*runFlags, map[string]bool, string, error) {
	f := &runFlags{}
	c := newRunCmd(f)
	root := &cobra.Command{Use: "scalelab"}
	root.AddCommand(c)
	norm := normalizeArgs(root, append([]string{"run"}, args...))[1:]
	if wantsHelp(norm) {
		return nil, nil, "", usageErr("run: --help is not a run argument; 'scalelab run --help' explains the run flags")
	}
	if err := c.Flags().Parse(norm); err != nil {
		return nil, nil, "", flagError(c, err)
	}
	if err := runPositional(c, c.Flags().Args()); err != nil {
		return nil, nil, "", err
	}
	return f, givenFlags(c), c.Flags().Arg(0), nil
}

func fmtDur(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	return fmt.Sprint(d.Round(time.Millisecond))
}

// options turns parsed flags into runner options.
func (f *runFlags) options(scenario string, given map[string]bool) *runner.Options {
	return &runner.Options{Scenario: scenario, Engine: f.engine, Target: f.target, Cluster: f.cluster, Model: f.model,
		Users: f.users, Think: f.think, Duration: f.duration, Ops: f.ops, Rate: f.rate, Arrivals: f.arrivals,
		Phases: f.phases, RampUp: f.rampUp, Loops: f.loops, Warmup: f.warmup, Seed: f.seed, Samples: f.samples, Out: f.out, Sets: f.sets,
		LoadOnly: f.loadOnly, Drain: f.drain, CPUProfile: f.cpuprof, NoAudit: !f.audit, SLO: f.slo, Faults: f.faults, RecoveryWait: f.recWait, Given: given, Args: os.Args,
		Tiers: f.tiers(), TelemetrySource: f.teleSrc, Observe: f.observe, MetricsListen: f.mListen, MetricsPush: f.mPush}
}

// tiers returns the tiers the flags name beside the store.
func (f *runFlags) tiers() []runner.TierOptions {
	if f.cache == "" && f.cacheTgt == "" && f.cacheCl == "" {
		return nil
	}
	return []runner.TierOptions{{Role: scenario.RoleCache, Engine: f.cache, Target: f.cacheTgt, Cluster: f.cacheCl}}
}

// plan checks the run flags as a run would and plans it; seg, when not
// nil, stands for the --segment a renderer adds (kube job).
func (f *runFlags) plan(scen string, given map[string]bool, seg *segment.Segment) (*runner.Plan, error) {
	sets := append([]string(nil), f.sets...)
	if f.app != "" {
		s, err := scenario.Lookup(scen)
		if err != nil {
			return nil, usageErr("run: %v", err)
		}
		if _, ok := s.(scenario.Server); !ok {
			return nil, usageErr("run: --app: scenario %s has no HTTP backend; scenarios that do: %s", scen, strings.Join(webScenarios(), ", "))
		}
		sets = append(sets, scen+".app="+f.app)
	}
	opts := f.options(scen, given)
	opts.Sets = sets
	var err error
	if opts.Telemetry, err = parseTelemetry(f.tele); err != nil {
		return nil, err
	}
	if err := f.segmentOptions(opts); err != nil {
		return nil, err
	}
	if seg != nil {
		opts.Segment = *seg
	}
	if err := f.checkEnums(); err != nil {
		return nil, err
	}
	return runner.NewPlan(opts)
}

// progressModes are the values of --progress.
var progressModes = []string{"auto", "bar", "lines", "off"}

// arrivalKinds are the values of --arrivals.
var arrivalKinds = []string{"constant", "poisson"}

// checkEnums checks the flags that take one of a few words.
func (f *runFlags) checkEnums() error {
	if err := enumFlag("run", "progress", f.progress, progressModes); err != nil {
		return err
	}
	if f.model != "" {
		if err := enumFlag("run", "model", f.model, load.ModelNames()); err != nil {
			return err
		}
	}
	return enumFlag("run", "arrivals", f.arrivals, arrivalKinds)
}

// segmentOptions parses --segment and --start-at into opts.
func (f *runFlags) segmentOptions(opts *runner.Options) error {
	if f.segment != "" {
		seg, err := segment.Parse(f.segment)
		if err != nil {
			return usageErr("run: %v", err)
		}
		opts.Segment = seg
	}
	if f.startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, f.startAt)
		if err != nil {
			return usageErr("run: --start-at %q: want an RFC 3339 time with its zone, e.g. %s", f.startAt, time.Now().UTC().Add(time.Minute).Truncate(time.Second).Format(time.RFC3339))
		}
		if late := time.Since(t); late > time.Hour {
			return usageErr("run: --start-at %s was %s ago; give an instant in the near future (every segment waits for it)", f.startAt, late.Round(time.Second))
		}
		opts.StartAt = t
	}
	return nil
}

// parseTelemetry reads --telemetry: an interval from 100ms to 1m, or off.
func parseTelemetry(s string) (time.Duration, error) {
	if s == "off" {
		return -1, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 100*time.Millisecond || d > time.Minute {
		return 0, usageErr("--telemetry %q: give an interval from 100ms to 1m (e.g. 1s), or off", s)
	}
	return d, nil
}
