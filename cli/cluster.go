package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/termtable"
)

// clusterLong is the description of `scalelab cluster`; the engines come
// from the registry of provisioners.
func clusterLong() string {
	return fmt.Sprintf(`Starts, inspects and stops local multi-node clusters. Clusters run on loopback, survive the
scalelab that started them, and keep their state (and a 0600 password file) in
$SCALELAB_HOME/clusters (default ~/.scalelab/clusters). Use one with: scalelab run SCENARIO
--cluster NAME (the cluster implies its engine).

Engines that can start clusters: %s.
'cluster up app' starts N scalelab serve processes behind HAProxy: the app tier of a web scenario,
on a store cluster (--cluster STORE) and optionally a cache cluster (--cache-cluster CACHE).`,
		strings.Join(cluster.Provisioners(), ", "))
}

// clusterCmd is `scalelab cluster` and its subcommands.
func clusterCmd() *cobra.Command {
	c := groupCmd(&cobra.Command{
		Use:   "cluster COMMAND",
		Short: "start, inspect and stop local multi-node clusters",
		Long:  clusterLong(),
		Example: `  scalelab cluster up postgres --name pg1 --replicas 2
  scalelab cluster up app --name web --scenario records --servers 2 --cluster pg1 --cache-cluster r1
  scalelab cluster status pg1
  scalelab cluster down pg1`,
		PersistentPreRun: func(c *cobra.Command, _ []string) {
			// networks a crashed scalelab left behind go first
			if removed, err := cluster.CleanStaleNets(); err != nil {
				fmt.Fprintf(c.ErrOrStderr(), "warning: removing stale cluster networks: %v\n", err)
			} else if len(removed) > 0 {
				fmt.Fprintf(c.ErrOrStderr(), "removed the stale networks of clusters that no longer exist: %s\n", strings.Join(removed, ", "))
			}
		},
	})
	c.AddCommand(clusterUpCmd(), clusterStatusCmd(), clusterDownCmd(), clusterListCmd())
	return c
}

// upFlags are the flags of `cluster up`.
type upFlags struct {
	name, heap, roles, backend, cpus, memory, cpuset string
	nodes, replicas, servers                         int
	timeout                                          time.Duration
	netns                                            bool
	opts, links, sets                                []string
	scen, store, cacheCl                             string
}

// clusterUpCmd is `scalelab cluster up`.
func clusterUpCmd() *cobra.Command {
	f := &upFlags{}
	c := &cobra.Command{
		Use:   "up ENGINE --name NAME",
		Short: "start a local cluster of ENGINE (or the app tier: cluster up app)",
		Long: fmt.Sprintf(`Starts a local cluster of ENGINE named NAME and waits until it is healthy (--timeout).
ENGINE is one of: %s.
'cluster up app' starts the app tier of a web scenario: --servers scalelab serve processes behind
HAProxy, on the store cluster --cluster STORE (default: a SQLite file of its own) and the cache
cluster --cache-cluster CACHE (with --set cache.mode=shared).
Each engine's clusters take options of their own (--opt KEY=VALUE; some have flags of their own too):
'cluster up ENGINE --help' lists them with their defaults and allowed values. A wrong key or value is
refused before anything starts.`, strings.Join(cluster.Provisioners(), ", ")),
		Example: `  scalelab cluster up postgres --name pg1 --replicas 2
  scalelab cluster up opensearch --name os3 --nodes 3 --heap 1g
  scalelab cluster up postgres --name pg --cpus 0.5 --memory 1g
  scalelab cluster up redis --name r1
  scalelab cluster up app --name web --scenario records --servers 2 --cluster pg1 --cache-cluster r1`,
		Args: exactArgs(1, "one ENGINE"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return cluster.Provisioners(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			return clusterUp(c.Context(), args[0], f, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	addGroup(c, "Cluster", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.name, "name", "", "cluster name (required)")
		fs.IntVar(&f.nodes, "nodes", 0, "number of nodes: the option nodes (default: the engine's)")
		fs.IntVar(&f.replicas, "replicas", 0, "read replicas: the option replicas ("+strings.Join(declaredBy(cluster.OptReplicas), ", ")+")")
		fs.StringVar(&f.heap, "heap", "", "JVM heap per node, e.g. 1g: the option heap ("+strings.Join(declaredBy(cluster.OptHeap), ", ")+")")
		fs.StringVar(&f.roles, "roles", "", "per-node roles, comma-separated, e.g. cm,data,data: the option roles ("+strings.Join(declaredBy(cluster.OptRoles), ", ")+")")
		fs.StringVar(&f.backend, "backend", "", "storage backend: the option backend ("+strings.Join(declaredBy(cluster.OptBackend), ", ")+")")
		fs.StringArrayVar(&f.opts, "opt", nil, "an option of ENGINE's clusters `KEY=VALUE` (repeatable), e.g. memory_mb=512 (memcached); 'cluster up ENGINE --help' lists them")
		fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "how long to wait for the cluster to become healthy")
	})
	addGroup(c, "Resources per node or app server (a cgroup each)", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.cpus, "cpus", "", "CPU limit per node in cores, e.g. 0.5")
		fs.StringVar(&f.memory, "memory", "", "memory limit per node, e.g. 512m or 1g")
		fs.StringVar(&f.cpuset, "cpuset", "", "CPUs each node may run on, e.g. 0 or 0-1 (pinning)")
	})
	addGroup(c, "Network", func(fs *pflag.FlagSet) {
		fs.BoolVar(&f.netns, "netns", false, "each node in its own network namespace on a bridge scalelab creates (root; "+strings.Join(cluster.NetnsCapable(), ", ")+")")
		fs.StringArrayVar(&f.links, "link", nil, "emulated link, with --netns: [NODE:]delay=1ms,jitter=1ms,loss=0.5%,rate=100mbit (repeatable)")
	})
	addGroup(c, "App tier (cluster up app)", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.scen, "scenario", "", "the web scenario the servers serve")
		fs.IntVar(&f.servers, "servers", 0, "the number of app servers behind the balancer (default 2)")
		fs.StringVar(&f.store, "cluster", "", "the store cluster the servers use (default: a SQLite file of the app cluster's own)")
		fs.StringArrayVar(&f.sets, "set", nil, "a scenario setting for every server, `KEY=VALUE` (repeatable)")
		fs.StringVar(&f.cacheCl, "cache-cluster", "", "the cache tier's cluster (redis, memcached) the servers cache in, with --set cache.mode=shared")
	})
	choices(c, "backend", allowedOf(cluster.OptBackend)...)
	choices(c, "scenario", webScenarios()...)
	_ = c.RegisterFlagCompletionFunc("cluster", completeClusters)
	_ = c.RegisterFlagCompletionFunc("cache-cluster", completeClusters)
	_ = c.RegisterFlagCompletionFunc("set", completeSetting)
	_ = c.RegisterFlagCompletionFunc("opt", completeClusterOption)
	return c
}

func clusterUp(ctx context.Context, engArg string, f *upFlags, stdout, stderr io.Writer) error {
	pos := []string{engArg}
	name, nodes, replicas, heap, roles, backend, timeout := &f.name, &f.nodes, &f.replicas, &f.heap, &f.roles, &f.backend, &f.timeout
	cpus, memory, cpuset, netnsFlag, opts, linkFlags, sets := &f.cpus, &f.memory, &f.cpuset, &f.netns, f.opts, f.links, f.sets
	scen, servers, store, cacheCl := &f.scen, &f.servers, &f.store, &f.cacheCl
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
			return usageErr("cluster up: --scenario, --servers, --cluster, --cache-cluster and --set are for `cluster up app` (the app tier); a %s cluster takes the options 'cluster up %s --help' lists", pos[0], pos[0])
		}
	}
	if *name == "" {
		return usageErr("cluster up: --name is required")
	}
	if err := cluster.CheckName(*name); err != nil {
		return usageErr("cluster up: %v", err)
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
		spec.Options[cluster.OptBackend] = *backend
	}
	if tiered {
		if err := appSpec(&spec, *scen, *store, *cacheCl, *servers, sets); err != nil {
			return err
		}
	}
	if _, err := cluster.Resolve(prov, spec); err != nil {
		return usageErr("cluster up %s: %v", pos[0], err)
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
		if te := (*cluster.UpTimeoutError)(nil); errors.As(err, &te) {
			te.Setting = "--timeout"
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

// clusterStatusCmd is `scalelab cluster status`.
func clusterStatusCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:               "status [NAME...]",
		Short:             "print the nodes of the clusters (all, or those named): role, pid, address, health",
		Example:           "  scalelab cluster status pg1\n  scalelab cluster status --json",
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeClusters,
		RunE: func(c *cobra.Command, args []string) error {
			return clusterStatus(c.Context(), args, asJSON, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func clusterStatus(ctx context.Context, pos []string, asJSONFlag bool, stdout io.Writer) error {
	asJSON := &asJSONFlag
	var err error
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
		tab := termtable.Table{Header: []string{"NODE", "ROLE", "PID", "ADDRESS", "ALIVE", "DETAIL"}, Keys: 1, Indent: "  "}
		for _, ns := range nodes {
			var detail []string
			for k, v := range ns.Detail {
				detail = append(detail, k+"="+v)
			}
			tab.Rows = append(tab.Rows, []string{ns.Name, ns.Role, strconv.Itoa(ns.PID), fmt.Sprintf("%s:%d", ns.Host, ns.Port), strconv.FormatBool(ns.Alive), strings.Join(sorted(detail), " ")})
		}
		_ = tab.Write(stdout, termtable.Width)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	return nil
}

// clusterDownCmd is `scalelab cluster down`.
func clusterDownCmd() *cobra.Command {
	var keep, force bool
	var grace time.Duration
	c := &cobra.Command{
		Use:   "down NAME",
		Short: "stop a cluster and remove its data (--keep keeps it)",
		Long: `Stops a cluster and removes its data (--keep keeps it). A store or cache cluster that an app
cluster uses is refused, naming that app cluster: stop it first, or add --force.`,
		Example:           "  scalelab cluster down pg1\n  scalelab cluster down pg1 --keep\n  scalelab cluster down pg1 --force",
		Args:              exactArgs(1, "one NAME"),
		ValidArgsFunction: completeFirstCluster,
		RunE: func(c *cobra.Command, args []string) error {
			return clusterDown(c.Context(), args, keep, force, grace, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&keep, "keep", false, "keep the data directories")
	c.Flags().BoolVar(&force, "force", false, "stop the cluster even while app clusters use it as their store or cache")
	c.Flags().DurationVar(&grace, "grace", 20*time.Second, "how long each node may take to stop after SIGTERM before SIGKILL")
	return c
}

func clusterDown(ctx context.Context, pos []string, keepFlag, force bool, graceFlag time.Duration, stdout io.Writer) error {
	keep, grace := &keepFlag, &graceFlag
	st, err := cluster.Load(pos[0])
	if err != nil {
		return withCode(ExitUsage, err)
	}
	deps, err := apptier.CheckDown(st.Name, force)
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("cluster down: %w", err))
	}
	for _, d := range deps {
		fmt.Fprintf(stdout, "warning: %s uses cluster %s: its requests fail from now on\n", d, st.Name)
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

// clusterListCmd is `scalelab cluster list`.
func clusterListCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "list",
		Aliases:           []string{"ls"},
		Short:             "list the local clusters: engine, nodes alive, target",
		Example:           "  scalelab cluster list",
		Args:              noArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              func(c *cobra.Command, _ []string) error { return clusterList(c.OutOrStdout()) },
	}
}

func clusterList(stdout io.Writer) error {
	names, err := cluster.List()
	if err != nil {
		return withCode(ExitUnfinished, err)
	}
	if len(names) == 0 {
		fmt.Fprintln(stdout, "no clusters (start one with: scalelab cluster up ENGINE --name NAME)")
		return nil
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
