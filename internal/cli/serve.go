package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/httpload"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

const serveUsage = `Usage: scalelab serve SCENARIO [--engine E] [--cluster NAME | --target T]
                      [--set key=value]... [--listen 127.0.0.1:8080]
                      [--max-inflight 16] [--max-queue N] [--request-timeout 30s] [--procs N]
                      [--cache-cluster NAME | --cache ENGINE --cache-target T]
                      [--route FROM=TO]...

Runs a scenario's backend (records, mhealth) as an HTTP server on the engine,
as its app tier: a run drives it with --app http://ADDR (or through a balancer
in front of several). The run loads the data; serve never does.
--max-inflight bounds the requests worked on at once (the others queue; a
request that cannot start within --request-timeout gets 503), --max-queue the
requests queued (one more is answered 503 at once; 0: unbounded), --procs sets
GOMAXPROCS. SIGTERM or Ctrl-C stops accepting, lets in-flight requests finish
and exits 0. Session cookies are signed with the secret in
--set records.secret_file=FILE (0600); app servers behind one balancer need
the same file. With a cache tier (a redis or memcached cluster) and
--set cache.mode=shared (the default with one) the servers cache in it; every
server behind one balancer shares its entries. --route FROM=TO reaches a
cluster node whose client address is FROM at TO instead (cluster up app --netns
gives each server, in a network namespace of its own, proxies on its bridge).
`

// serveCmd is `scalelab serve SCENARIO`.
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	engName := fs.String("engine", "", "engine (default: the cluster's, else sqlite)")
	clusterName := fs.String("cluster", "", "a local cluster (scalelab cluster up)")
	target := fs.String("target", "", "the engine's target (as for run)")
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on")
	maxInFlight := fs.Int("max-inflight", 16, "requests worked on at once; 0: unbounded")
	maxQueue := fs.Int("max-queue", 0, "requests waiting for a worker; one more gets 503 at once; 0: unbounded")
	timeout := fs.Duration("request-timeout", 30*time.Second, "request timeout")
	procs := fs.Int("procs", 0, "GOMAXPROCS (0: the machine's CPUs)")
	var sets multiFlag
	fs.Var(&sets, "set", "setting key=value (repeatable)")
	cacheEng := fs.String("cache", "", "the cache tier's engine (redis, memcached)")
	cacheTgt := fs.String("cache-target", "", "the cache tier's target")
	cacheCl := fs.String("cache-cluster", "", "the cache tier on a local cluster (implies --cache)")
	var routeFlags multiFlag
	fs.Var(&routeFlags, "route", "reach a cluster node's client address FROM at TO instead: FROM=TO (repeatable)")
	pos, err := splitPositional(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, serveUsage)
		return nil
	}
	if err != nil {
		return usageErr("serve: %v; see 'scalelab help serve'", err)
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, serveUsage)
		return usageErr("serve: one SCENARIO expected, got %q", pos)
	}
	scen, err := scenario.Lookup(pos[0])
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
	var st *cluster.State
	if *clusterName != "" {
		if *target != "" {
			return usageErr("serve: --cluster and --target: give one")
		}
		if st, err = cluster.Load(*clusterName); err != nil {
			return usageErr("serve: %v", err)
		}
		st.Reroute(routes)
		if *engName == "" {
			*engName = st.Engine
		}
	}
	if *engName == "" {
		*engName = "sqlite"
	}
	eng, err := engine.Lookup(*engName)
	if err != nil {
		return usageErr("serve: %v", err)
	}
	set := setting.NewSet(append(append([]setting.Spec{}, eng.Settings()...), scen.Settings()...)...)
	for _, a := range sets {
		if err := set.Apply(a); err != nil {
			return usageErr("serve: --set %s: %v", a, err)
		}
	}
	if eng.Name() == "sqlite" && *target == "" {
		return usageErr("serve: the sqlite engine needs --target FILE: the database file, which a run loads with the same --target and --app URL")
	}
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	conn, err := eng.Open(ctx, engine.Config{Target: *target, Settings: set, Cluster: st, Dir: "."})
	if err != nil {
		return withCode(ExitUnfinished, fmt.Errorf("serve: connect to %s: %w", eng.Name(), err))
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
		return withCode(ExitUnfinished, fmt.Errorf("serve %s: %w", scen.Name(), err))
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
	fmt.Fprintf(stdout, "stopped after %d responses (%s; %d answered 503 because the queue was full)\n", s.Served(), httpload.Codes(s.Codes()), s.Shed())
	if err != nil {
		return withCode(ExitUnfinished, err)
	}
	return nil
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
