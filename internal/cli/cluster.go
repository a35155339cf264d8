package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cgroup"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
)

const clusterUsage = `Usage:
  scalelab cluster up ENGINE --name NAME [--nodes N] [--replicas N] [--heap 1g]
                     [--roles cm,data,data] [--opt key=value] [--timeout 10m]
                     [--backend sqlite|postgres]   (ferretdb)
                     [--cpus 0.5] [--memory 1g] [--cpuset 0]   (per node, in a cgroup)
                     [--netns]   (each node in its own network namespace; root;
                                  postgres, opensearch, elasticsearch, cassandra, app)
                     [--link [NODE:]delay=1ms,jitter=1ms,loss=0.5%,rate=100mbit]
                                 (emulated links, with --netns; repeatable)
  scalelab cluster up app --name NAME --scenario records [--servers 2]
                     [--cluster STORE] [--set records.eager=true]...
                     [--opt max_inflight=16] [--opt procs=1] [--opt request_timeout=30s]
                     [--opt balance=roundrobin|leastconn] [--opt check_interval=1s]
                     [--cpus 1] [--memory 512m]   (per app server)
                                 (N scalelab serve processes behind HAProxy)
  scalelab cluster status [NAME] [--json]
  scalelab cluster down NAME [--keep]
  scalelab cluster list
Clusters run on loopback, survive the scalelab that started them, and keep their
state (and a 0600 password file) in $SCALELAB_HOME/clusters (default ~/.scalelab/clusters).
Use one with: scalelab run SCENARIO --cluster NAME (the cluster implies its engine)
`

// clusterCmd dispatches the cluster subcommands.
func clusterCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, clusterUsage)
		return usageErr("cluster: no subcommand given (up, status, down, list)")
	}
	// networks a crashed scalelab left behind go first
	if removed, err := cluster.CleanStaleNets(); err != nil {
		fmt.Fprintf(stderr, "warning: removing stale cluster networks: %v\n", err)
	} else if len(removed) > 0 {
		fmt.Fprintf(stderr, "removed the stale networks of clusters that no longer exist: %s\n", strings.Join(removed, ", "))
	}
	switch args[0] {
	case "up":
		return clusterUp(ctx, args[1:], stdout, stderr)
	case "status":
		return clusterStatus(ctx, args[1:], stdout)
	case "down":
		return clusterDown(ctx, args[1:], stdout)
	case "list", "ls":
		return clusterList(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, clusterUsage)
		return nil
	}
	return usageErr("cluster: unknown subcommand %q; allowed: up, status, down, list", args[0])
}

// splitPositional parses flags wherever the positional arguments stand.
func splitPositional(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageErr("cluster %s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func clusterUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("name", "", "cluster name (required)")
	nodes := fs.Int("nodes", 0, "number of nodes (default: the engine's)")
	replicas := fs.Int("replicas", 0, "read replicas (postgres)")
	heap := fs.String("heap", "", "JVM heap per node, e.g. 1g")
	roles := fs.String("roles", "", "per-node roles, comma-separated, e.g. cm,data,data")
	backend := fs.String("backend", "", "storage backend (ferretdb: sqlite or postgres)")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait for the cluster to become healthy")
	cpus := fs.String("cpus", "", "CPU limit per node in cores, e.g. 0.5 (a cgroup per node)")
	memory := fs.String("memory", "", "memory limit per node, e.g. 512m or 1g (a cgroup per node)")
	cpuset := fs.String("cpuset", "", "CPUs each node may run on, e.g. 0 or 0-1 (pinning)")
	netnsFlag := fs.Bool("netns", false, "each node in its own network namespace on a bridge scalelab creates (root)")
	var opts, linkFlags, sets multiFlag
	fs.Var(&opts, "opt", "engine-specific option key=value (repeatable)")
	scen := fs.String("scenario", "", "app: the web scenario the servers serve (records, mhealth)")
	servers := fs.Int("servers", 0, "app: the number of app servers behind the balancer (default 2)")
	store := fs.String("cluster", "", "app: the store cluster the servers use (default: a SQLite file of the app cluster's own)")
	fs.Var(&sets, "set", "app: a scenario setting for every server, key=value (repeatable)")
	cacheCl := fs.String("cache-cluster", "", "app: the cache tier's cluster (redis, memcached) the servers cache in, with --set cache.mode=shared")
	fs.Var(&linkFlags, "link", "emulated link, with --netns: [NODE:]delay=1ms,jitter=1ms,loss=0.5%,rate=100mbit (repeatable)")
	pos, err := splitPositional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("cluster up: one ENGINE expected, got %q\n%s", pos, clusterUsage)
	}
	prov, err := cluster.Lookup(pos[0])
	if err != nil {
		return usageErr("cluster up: %v", err)
	}
	engName := cluster.EngineOf(prov)
	_, tiered := prov.(cluster.Tiered)
	if !tiered {
		if _, err := engine.Lookup(engName); err != nil {
			return usageErr("cluster up: %v", err)
		}
		if *scen != "" || *servers != 0 || *store != "" || *cacheCl != "" || len(sets) > 0 {
			return usageErr("cluster up: --scenario, --servers, --cluster, --cache-cluster and --set are for `cluster up app` (the app tier); a %s cluster takes --nodes, --replicas and --opt", pos[0])
		}
	}
	if *name == "" {
		return usageErr("cluster up: --name is required")
	}
	if err := cluster.CheckName(*name); err != nil {
		return usageErr("cluster up: %v", err)
	}
	if *nodes < 0 || *nodes > 16 || *replicas < 0 || *replicas > 8 {
		return usageErr("cluster up: --nodes must be in [1, 16] and --replicas in [0, 8] on one machine")
	}
	if _, err := cluster.Load(*name); err == nil {
		return usageErr("cluster up: a cluster named %q exists; `scalelab cluster down %s` first", *name, *name)
	}
	limits, err := parseLimits(*cpus, *memory, *cpuset)
	if err != nil {
		return usageErr("cluster up: %v", err)
	}
	spec := cluster.Spec{Engine: pos[0], Name: *name, Nodes: *nodes, Replicas: *replicas, Heap: *heap, Options: map[string]string{}, Limits: limits}
	if *roles != "" {
		spec.Roles = strings.Split(*roles, ",")
	}
	for _, o := range opts {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			return usageErr("cluster up: --opt %q is not key=value", o)
		}
		spec.Options[k] = v
	}
	if *backend != "" {
		spec.Options["backend"] = *backend
	}
	if tiered {
		if err := appSpec(&spec, *scen, *store, *cacheCl, *servers, sets); err != nil {
			return err
		}
	}
	st := &cluster.State{Name: *name, Engine: engName, Created: time.Now().UTC(), Dir: cluster.Dir(*name), Params: map[string]string{}}
	if engName != pos[0] {
		st.Kind = pos[0]
	}
	var links *cluster.Links
	if len(linkFlags) > 0 {
		if !*netnsFlag {
			return usageErr("cluster up: --link needs --netns (emulated links join nodes that each have a network of their own)")
		}
		if links, err = cluster.ParseLinks(linkFlags); err != nil {
			return usageErr("cluster up: %v", err)
		}
	}
	if *netnsFlag {
		if n, ok := prov.(cluster.Networked); !ok || !n.Netns() {
			return usageErr("cluster up: --netns: the %s provisioner binds its nodes to loopback only; provisioners that support --netns: %s", pos[0], strings.Join(cluster.NetnsCapable(), ", "))
		}
	}
	spec.Netns = *netnsFlag
	if tiered {
		if err := apptier.CheckSpec(spec); err != nil {
			return usageErr("cluster up %s: %v", *name, err)
		}
	}
	fmt.Fprintf(stderr, "starting %s cluster %s in %s ...\n", pos[0], *name, st.Dir)
	start := time.Now()
	if err := cluster.Launch(ctx, prov, spec, st, links, *timeout); err != nil {
		code := ExitUnfinished
		if errors.Is(err, context.Canceled) {
			code = ExitInterrupted
		}
		return withCode(code, fmt.Errorf("cluster up %s: %w", *name, err))
	}
	fmt.Fprintf(stdout, "cluster %s (%s) is up in %.1fs\n", *name, pos[0], time.Since(start).Seconds())
	printState(stdout, st)
	if tiered {
		fmt.Fprintf(stdout, "use it: scalelab run %s --cluster %s (the servers' store and the balancer's URL)\n", st.Params[apptier.ParamScenario], *name)
		return nil
	}
	fmt.Fprintf(stdout, "use it: scalelab run SCENARIO --cluster %s (engine %s)\n", *name, engName)
	return nil
}

// linksText says each node's emulated link and how its paths are made.
func linksText(st *cluster.State) string {
	var parts []string
	for _, n := range st.Nodes {
		if st.OnHost(n.Name) {
			continue // an app cluster's balancer: no link
		}
		parts = append(parts, n.Name+" "+st.Links.Of(n.Name).String())
	}
	how := "loss and rate in the kernel"
	if st.Links.Proxied {
		how += fmt.Sprintf(", delay by %d proxies (server pid %d)", len(st.Links.Proxies), st.Links.PID)
	}
	return strings.Join(parts, "; ") + " (" + how + ")"
}

func printState(w io.Writer, st *cluster.State) {
	if st.Engine == apptier.Name {
		fmt.Fprintf(w, "app tier: %s\n", apptier.Describe(st))
	}
	fmt.Fprintf(w, "target: %s\n", st.Target)
	if st.SecretFile != "" && st.Engine != apptier.Name {
		fmt.Fprintf(w, "user: %s, password in %s (mode 0600)\n", st.User, st.SecretFile)
	}
	fmt.Fprintf(w, "auth: %s\n", st.Auth)
	if st.Net != nil {
		fmt.Fprintf(w, "network: each node in its own namespace on bridge %s (%s); the host is %s\n", st.Net.Bridge, st.Net.Subnet, st.Net.Gateway)
	}
	if st.Links != nil {
		fmt.Fprintf(w, "links: %s\n", linksText(st))
	}
	if st.Limits != nil && !st.Limits.IsZero() {
		fmt.Fprintf(w, "limits per node: %s (cgroup %s; each node's cgroup is in status --json)\n", st.Limits, st.LimitsCgroup)
	}
}

func clusterStatus(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := splitPositional(fs, args)
	if err != nil {
		return err
	}
	names := pos
	if len(names) == 0 {
		if names, err = cluster.List(); err != nil {
			return withCode(ExitUnfinished, err)
		}
		if len(names) == 0 {
			fmt.Fprintln(stdout, "no clusters")
			return nil
		}
	}
	var all []map[string]any
	for _, n := range names {
		st, err := cluster.Load(n)
		if err != nil {
			return withCode(ExitUsage, err)
		}
		prov, err := cluster.ProvisionerOf(st)
		if err != nil {
			return withCode(ExitUnfinished, err)
		}
		nodes, err := prov.Status(ctx, st)
		if err != nil {
			return withCode(ExitUnfinished, fmt.Errorf("cluster status %s: %w", n, err))
		}
		if *asJSON {
			all = append(all, map[string]any{"name": st.Name, "engine": st.Engine, "target": st.Target, "auth": st.Auth, "params": st.Params, "nodes": nodes})
			continue
		}
		fmt.Fprintf(stdout, "cluster %s (%s), created %s\n", st.Name, kindOf(st), st.Created.Format(time.RFC3339))
		printState(stdout, st)
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODE\tROLE\tPID\tADDRESS\tALIVE\tDETAIL")
		for _, ns := range nodes {
			var detail []string
			for k, v := range ns.Detail {
				detail = append(detail, k+"="+v)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s:%d\t%t\t%s\n", ns.Name, ns.Role, ns.PID, ns.Host, ns.Port, ns.Alive, strings.Join(sorted(detail), " "))
		}
		tw.Flush()
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	return nil
}

func clusterDown(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("down", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	keep := fs.Bool("keep", false, "keep the data directories")
	grace := fs.Duration("grace", 20*time.Second, "how long each node may take to stop after SIGTERM before SIGKILL")
	pos, err := splitPositional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("cluster down: one NAME expected, got %q", pos)
	}
	st, err := cluster.Load(pos[0])
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if stopErr := cluster.Teardown(ctx, st, *grace); stopErr != nil {
		return withCode(ExitUnfinished, fmt.Errorf("cluster down %s: %w", st.Name, stopErr))
	}
	if *keep {
		fmt.Fprintf(stdout, "cluster %s stopped; data kept in %s\n", st.Name, st.Dir)
		// Keep the data but free the name.
		return os.Rename(st.Dir+"/cluster.json", st.Dir+"/cluster.json.stopped")
	}
	if err := os.RemoveAll(st.Dir); err != nil {
		return withCode(ExitUnfinished, fmt.Errorf("cluster down %s: remove data: %w", st.Name, err))
	}
	fmt.Fprintf(stdout, "cluster %s stopped and removed\n", st.Name)
	return nil
}

func clusterList(stdout io.Writer) error {
	names, err := cluster.List()
	if err != nil {
		return withCode(ExitUnfinished, err)
	}
	for _, n := range names {
		st, err := cluster.Load(n)
		if err != nil {
			fmt.Fprintf(stdout, "%s\t(unreadable: %v)\n", n, err)
			continue
		}
		alive := 0
		for _, nd := range st.Nodes {
			if cluster.Alive(nd.PID) {
				alive++
			}
		}
		fmt.Fprintf(stdout, "%s\t%s\t%d/%d nodes alive\t%s\n", st.Name, kindOf(st), alive, len(st.Nodes), st.Target)
	}
	return nil
}

// kindOf names what a cluster runs: its engine, or its server and the
// engine that uses it ("ferretdb for mongodb").
func kindOf(st *cluster.State) string {
	if st.Kind != "" && st.Kind != st.Engine {
		return st.Kind + " for " + st.Engine
	}
	return st.Engine
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// parseLimits reads --cpus, --memory and --cpuset.
func parseLimits(cpus, memory, cpuset string) (cgroup.Limits, error) {
	var l cgroup.Limits
	var err error
	if cpus != "" {
		if l.CPUs, err = cgroup.ParseCPUs(cpus); err != nil {
			return l, fmt.Errorf("--cpus: %w", err)
		}
	}
	if memory != "" {
		if l.MemoryBytes, err = cgroup.ParseMemory(memory); err != nil {
			return l, fmt.Errorf("--memory: %w", err)
		}
	}
	if cpuset != "" {
		if l.CPUSet, err = cgroup.ParseCPUSet(cpuset); err != nil {
			return l, fmt.Errorf("--cpuset: %w", err)
		}
	}
	return l, nil
}
