package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/bindcheck"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// serveLong is the description of `scalelab serve`.
const serveLong = `Runs a scenario's backend (records, mhealth) as an HTTP server on the engine, as its app tier: a
run drives it with --app http://ADDR (or through a balancer in front of several). The run loads the
data; serve never does. --max-inflight bounds the requests worked on at once (the others queue; a
request that cannot start within --request-timeout gets 503), --max-queue the requests queued
(one more is answered 503 at once; 0: unbounded), --procs sets GOMAXPROCS. SIGTERM or
Ctrl-C stops accepting, lets in-flight requests finish and exits 0. A scenario with sessions
(records) signs their cookies with the secret in --secret-file FILE (0600); app servers behind one
balancer need the same file. A scenario without sessions (mhealth) takes none. With a cache tier (a
redis or memcached cluster) and --set cache.mode=shared (the default with one) the servers cache
in it; every server behind one balancer shares its entries. --route FROM=TO reaches a cluster node
whose client address is FROM at TO instead (cluster up app --netns gives each server, in a network
namespace of its own, proxies on its bridge).`

// serveFlags are the flags of `scalelab serve`.
type serveFlags struct {
	engine, cluster, target, listen string
	secretFile                      string
	maxInFlight, maxQueue, procs    int
	timeout                         time.Duration
	sets, routes                    []string
	cacheEng, cacheTgt, cacheCl     string
}

// serveCmd is `scalelab serve SCENARIO`.
func serveCmd() *cobra.Command {
	f := &serveFlags{}
	c := &cobra.Command{
		Use:   "serve SCENARIO",
		Short: "run a scenario's backend (records, mhealth) as an HTTP app server",
		Long:  serveLong,
		Example: `  scalelab serve records --target records.db --listen 127.0.0.1:8080
  scalelab run records --target records.db --app http://127.0.0.1:8080 --duration 30s`,
		Args:              exactArgs(1, "one SCENARIO"),
		ValidArgsFunction: completeWebScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			return serve(c.Context(), args[0], f, c.OutOrStdout())
		},
	}
	addGroup(c, "Engine and tiers", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.engine, "engine", "", "engine (default: the cluster's, else sqlite)")
		fs.StringVar(&f.cluster, "cluster", "", "a local cluster (scalelab cluster up)")
		fs.StringVar(&f.target, "target", "", "the engine's target (as for run)")
		fs.StringArrayVar(&f.sets, "set", nil, "a setting, `KEY=VALUE` (repeatable)")
		fs.StringVar(&f.cacheEng, "cache", "", "the cache tier's engine")
		fs.StringVar(&f.cacheTgt, "cache-target", "", "the cache tier's target")
		fs.StringVar(&f.cacheCl, "cache-cluster", "", "the cache tier on a local cluster (implies --cache)")
		fs.StringArrayVar(&f.routes, "route", nil, "reach a cluster node's client address FROM at TO instead: FROM=TO (repeatable)")
	})
	addGroup(c, "Server", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to listen on")
		fs.IntVar(&f.maxInFlight, "max-inflight", 16, "requests worked on at once; 0: unbounded")
		fs.IntVar(&f.maxQueue, "max-queue", 0, "requests waiting for a worker; one more gets 503 at once; 0: unbounded")
		fs.DurationVar(&f.timeout, "request-timeout", 30*time.Second, "request timeout: a request that cannot start within it gets 503")
		fs.IntVar(&f.procs, "procs", 0, "GOMAXPROCS (0: the machine's CPUs)")
		fs.StringVar(&f.secretFile, "secret-file", "", "`FILE` (0600) with the secret that signs session cookies, for a scenario with sessions (records; others take none)")
	})
	choices(c, "engine", engine.Names()...)
	choices(c, "cache", engine.WithCache()...)
	_ = c.RegisterFlagCompletionFunc("cluster", completeClusters)
	_ = c.RegisterFlagCompletionFunc("cache-cluster", completeClusters)
	_ = c.RegisterFlagCompletionFunc("set", completeSetting)
	return c
}

// serve runs the backend of scenario name until ctx ends.
func serve(ctx context.Context, name string, f *serveFlags, stdout io.Writer) error {
	listen := &f.listen
	maxInFlight, maxQueue, timeout, procs, routeFlags := &f.maxInFlight, &f.maxQueue, &f.timeout, &f.procs, f.routes
	cacheEng, cacheTgt, cacheCl := &f.cacheEng, &f.cacheTgt, &f.cacheCl
	scen, err := scenario.Lookup(name)
	if err != nil {
		return usageErr("serve: %v", err)
	}
	srvScen, ok := scen.(scenario.Server)
	if !ok {
		return usageErr("serve: scenario %s is not a web application; scenarios that are: %s", scen.Name(), strings.Join(webScenarios(), ", "))
	}
	var routes []cluster.Route
	for _, r := range routeFlags {
		rt, err := cluster.ParseRoute(r)
		if err != nil {
			return usageErr("serve: --route: %v", err)
		}
		routes = append(routes, rt)
	}
	if *maxInFlight < 0 || *timeout <= 0 || *procs < 0 {
		return usageErr("serve: --max-inflight and --procs must be 0 or more, --request-timeout positive")
	}
	appCfg := app.Config{MaxInFlight: *maxInFlight, MaxQueue: *maxQueue, RequestTimeout: *timeout}
	if err := appCfg.Check(); err != nil {
		return usageErr("serve: --max-inflight %d, --max-queue %d: %v", *maxInFlight, *maxQueue, err)
	}
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	if _, _, err := net.SplitHostPort(*listen); err != nil {
		return usageErr("serve: --listen %s: HOST:PORT expected (127.0.0.1:8080, :8080): %v", *listen, err)
	}
	if err := bindcheck.Check(*listen); err != nil { // before the store is opened (a new database file)
		return usageErr("serve: --listen %s: %v; give a free port (or stop what holds it)", *listen, err)
	}
	eng, set, conn, err := openServeStore(ctx, f, scen, routes)
	if err != nil {
		return err
	}
	defer conn.Close()
	tiers, err := serveCache(ctx, *cacheEng, *cacheTgt, *cacheCl, routes)
	if err != nil {
		return err
	}
	for _, t := range tiers {
		defer t.Conn.Close()
	}
	h, err := srvScen.Handler(ctx, scenario.Env{Engine: eng.Name(), Conn: conn, Settings: set, Tiers: tiers})
	if err != nil {
		return withCode(runner.ConnectExitCode(err), fmt.Errorf("serve %s: %w", scen.Name(), err))
	}
	s := app.New(h, appCfg)
	if err := s.Listen(*listen); err != nil {
		return withCode(ExitUnfinished, fmt.Errorf("serve: %w", err))
	}
	queue := "unbounded queue"
	if *maxQueue > 0 {
		queue = fmt.Sprintf("at most %d queued", *maxQueue)
	}
	fmt.Fprintf(stdout, "serving %s on %s (engine %s, %d requests at once, %s, timeout %s, GOMAXPROCS %d); SIGTERM or Ctrl-C stops\n",
		scen.Name(), s.URL(), eng.Name(), *maxInFlight, queue, *timeout, runtime.GOMAXPROCS(0))
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), *timeout+5*time.Second)
	defer cancel()
	err = s.Shutdown(sctx)
	codes := results.ResponseCounts(s.Codes())
	if codes != "" {
		codes += "; "
	}
	fmt.Fprintf(stdout, "stopped after %d responses (%s%d answered 503 because the queue was full)\n", s.Served(), codes, s.Shed())
	if err != nil {
		return withCode(ExitUnfinished, err)
	}
	return nil
}

// openServeStore resolves serve's store (--cluster, --engine, --target),
// its settings (--set, --secret-file), and connects to it.
func openServeStore(ctx context.Context, f *serveFlags, scen scenario.Scenario, routes []cluster.Route) (eng engine.Engine, set *setting.Set, conn engine.Conn, err error) {
	engName, clusterName, target := &f.engine, &f.cluster, &f.target
	var st *cluster.State
	if *clusterName != "" {
		if *target != "" {
			return nil, nil, nil, usageErr("serve: --cluster and --target: give one")
		}
		if st, err = cluster.Load(*clusterName); err != nil {
			return nil, nil, nil, usageErr("serve: %v", err)
		}
		st.Reroute(routes)
		if *engName == "" {
			*engName = st.Engine
		}
	}
	if *engName == "" {
		if err := runner.CheckDefaultTarget(*target); err != nil {
			return nil, nil, nil, fmt.Errorf("serve: %w", err)
		}
		*engName = engine.Default
	}
	eng, err = engine.Lookup(*engName)
	if err != nil {
		return nil, nil, nil, usageErr("serve: %v", err)
	}
	set = setting.NewSet(append(append([]setting.Spec{}, eng.Settings()...), scen.Settings()...)...)
	for _, a := range f.sets {
		if err := set.Apply(a); err != nil {
			return nil, nil, nil, usageErr("serve: --set %s: %v", a, err)
		}
	}
	if err := applySecretFile(set, scen.Name(), f.secretFile); err != nil {
		return nil, nil, nil, usageErr("serve: %v", err)
	}
	if engine.HasFileTarget(eng.Name()) && *target == "" {
		return nil, nil, nil, usageErr("serve: the %s engine needs --target FILE: the database file, which a run loads with the same --target and --app URL", eng.Name())
	}
	if tc, ok := eng.(engine.TargetChecker); ok && *target != "" {
		if err := tc.CheckTarget(*target); err != nil {
			return nil, nil, nil, usageErr("serve: --target: %v", err)
		}
	}
	if err := engine.CheckServerNamed(eng.Name(), *target, st != nil); err != nil {
		return nil, nil, nil, usageErr("serve: %v", err)
	}
	conn, err = eng.Open(ctx, engine.Config{Target: *target, Settings: set, Cluster: st, Dir: "."})
	if err != nil {
		return nil, nil, nil, withCode(runner.ConnectExitCode(err), fmt.Errorf("serve: connect to %s: %w", eng.Name(), err))
	}
	return eng, set, conn, nil
}

// webScenarios names the scenarios `serve` runs.
func webScenarios() []string {
	var names []string
	for _, n := range scenario.Names() {
		if s, err := scenario.Lookup(n); err == nil {
			if _, ok := s.(scenario.Server); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// serveCache opens the cache tier serve was given (none: nil).
func serveCache(ctx context.Context, name, target, cl string, routes []cluster.Route) (map[string]scenario.Tier, error) {
	if name == "" && target == "" && cl == "" {
		return nil, nil
	}
	var st *cluster.State
	if cl != "" {
		if target != "" {
			return nil, usageErr("serve: --cache-cluster and --cache-target: give one")
		}
		var err error
		if st, err = cluster.Load(cl); err != nil {
			return nil, usageErr("serve: --cache-cluster: %v", err)
		}
		st.Reroute(routes)
		if name == "" {
			name = st.Engine
		}
		target = st.Target
	}
	if name == "" {
		return nil, usageErr("serve: --cache-target needs --cache ENGINE (%s)", strings.Join(engine.WithCache(), ", "))
	}
	eng, err := engine.Lookup(name)
	if err != nil {
		return nil, usageErr("serve: --cache: %v", err)
	}
	conn, err := eng.Open(ctx, engine.Config{Target: target, Settings: setting.NewSet(eng.Settings()...), Cluster: st, Dir: "."})
	if err != nil {
		return nil, withCode(ExitUnfinished, fmt.Errorf("serve: connect to the cache tier (%s): %w", name, err))
	}
	return map[string]scenario.Tier{scenario.RoleCache: {Engine: name, Conn: conn, Settings: setting.NewSet(eng.Settings()...)}}, nil
}

// applySecretFile gives a scenario with sessions, one that declares
// SCENARIO.secret_file, the secret in file; a scenario without takes none,
// so that an app cluster can give every web scenario's servers one.
func applySecretFile(set *setting.Set, scen, file string) error {
	key := scen + ".secret_file"
	if file == "" || !set.Has(key) {
		return nil
	}
	if set.Given(key) {
		return fmt.Errorf("--secret-file and --set %s: give one", key)
	}
	if err := set.SetValue(key, file); err != nil {
		return fmt.Errorf("--secret-file: %w", err)
	}
	return nil
}
