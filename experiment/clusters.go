package experiment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// group is the combinations that share a local cluster (or need none).
type group struct {
	key    string
	spec   *ClusterSpec // nil: no cluster
	app    *ClusterSpec // the app cluster in front of it; nil: none
	cache  *ClusterSpec // the cache tier's cluster; nil: none
	combos []int        // indexes into the matrix
}

// clusterKey identifies a cluster configuration.
func clusterKey(c *ClusterSpec) string {
	if c == nil {
		return ""
	}
	var opts []string
	for k, v := range c.Options {
		opts = append(opts, k+"="+v)
	}
	sort.Strings(opts)
	return fmt.Sprintf("%s nodes=%d replicas=%d heap=%s cpus=%s memory=%s cpuset=%s roles=%s opts=%s netns=%t link=%s", c.Engine, c.Nodes, c.Replicas, c.Heap,
		c.CPUs, c.Memory, c.CPUSet, strings.Join(c.Roles, ","), strings.Join(opts, ","), c.Netns, c.Link)
}

// groups partitions the combinations by their clusters (store and app),
// in matrix order of first appearance; combinations without a cluster
// form one group.
func groups(combos []*Combination) []group {
	var out []group
	at := map[string]int{}
	for i, c := range combos {
		k := groupKey(c)
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, group{key: k, spec: c.Cluster, app: c.App, cache: c.Cache})
		}
		out[j].combos = append(out[j].combos, i)
	}
	return out
}

// clusterName picks a free cluster name for an experiment's cluster.
func clusterName(engine string, n int) string {
	e := engine
	if len(e) > 12 {
		e = e[:12]
	}
	for i := 0; ; i++ {
		name := fmt.Sprintf("xp-%s-%d-%d", e, os.Getpid()%1000000, n+i)
		if _, err := cluster.Load(name); err != nil {
			return name
		}
	}
}

// startCluster starts a group's cluster as `scalelab cluster up` does
// (cluster.Launch): on failure, whatever started is stopped and the state
// removed.
func startCluster(ctx context.Context, cs *ClusterSpec, name string) (*cluster.State, error) {
	prov, err := cluster.ForEngine(cs.Engine)
	if err != nil {
		return nil, err
	}
	spec := cluster.Spec{Engine: prov.Engine(), Name: name, Nodes: cs.Nodes, Replicas: cs.Replicas, Heap: cs.Heap,
		Roles: cs.Roles, Options: map[string]string{}, Netns: cs.Netns}
	for k, v := range cs.Options {
		spec.Options[k] = v
	}
	st := &cluster.State{Name: name, Engine: cs.Engine, Created: time.Now().UTC(), Dir: cluster.Dir(name), Params: map[string]string{"started_by": "experiment"}}
	if prov.Engine() != cs.Engine {
		st.Kind = prov.Engine()
	}
	if spec.Limits, err = cs.limits(); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	var links *cluster.Links
	if l := cs.LinkSpecs(); len(l) > 0 {
		spec.Netns = true
		if links, err = cluster.ParseLinks(l); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", name, err)
		}
	}
	timeout := cs.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	if err := cluster.Launch(ctx, prov, spec, st, links, timeout); err != nil {
		if te := (*cluster.UpTimeoutError)(nil); errors.As(err, &te) {
			te.Setting = "its clusters entry's timeout"
		}
		return nil, fmt.Errorf("start %s cluster %s: %w", cs.Engine, name, err)
	}
	return st, nil
}

// stopCluster stops every node (cluster.Teardown) and removes the
// cluster's state and data. It does not depend on the experiment's
// context: a cluster is stopped even after Ctrl-C.
func stopCluster(st *cluster.State) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errs := []error{cluster.Teardown(ctx, st, 20*time.Second)}
	for _, n := range st.Nodes {
		if cluster.Alive(n.PID) {
			errs = append(errs, fmt.Errorf("node %s (pid %d) still runs", n.Name, n.PID))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop cluster %s: %w", st.Name, err)
	}
	if err := os.RemoveAll(st.Dir); err != nil {
		return fmt.Errorf("stop cluster %s: remove its data: %w", st.Name, err)
	}
	return nil
}

// limits parses the cluster's per-node limits.
func (c *ClusterSpec) limits() (cgroup.Limits, error) {
	var l cgroup.Limits
	var err error
	if c.CPUs != "" {
		if l.CPUs, err = cgroup.ParseCPUs(c.CPUs); err != nil {
			return l, fmt.Errorf("cpus: %w", err)
		}
	}
	if c.Memory != "" {
		if l.MemoryBytes, err = cgroup.ParseMemory(c.Memory); err != nil {
			return l, fmt.Errorf("memory: %w", err)
		}
	}
	if c.CPUSet != "" {
		if l.CPUSet, err = cgroup.ParseCPUSet(c.CPUSet); err != nil {
			return l, fmt.Errorf("cpuset: %w", err)
		}
	}
	return l, nil
}

// clusters decodes the file's `clusters:` mapping, one per engine.
func (d *decoder) clusters(s *Spec, n *yaml.Node) {
	for _, e := range d.fields(n, "clusters", nil) {
		field := join("clusters", e.key)
		c := ClusterSpec{Engine: e.key, Pos: posOf(e.k), Options: map[string]string{}, Timeout: 10 * time.Minute}
		for _, f := range d.fields(e.v, field, clusterFields) {
			ff := join(field, f.key)
			switch f.key {
			case "nodes":
				c.Nodes, _ = d.integer(f.v, ff, 1, 16)
			case "replicas":
				c.Replicas, _ = d.integer(f.v, ff, 0, 8)
			case "heap":
				if v := d.str(f.v, ff); v.Set {
					if err := checkCluster("heap", v.Text); err != nil {
						d.errorf(f.v, ff, "%v", err)
					}
					c.Heap = v.Text
				}
			case "cpus", "memory", "cpuset":
				if v := d.str(f.v, ff); v.Set {
					if err := checkCluster(f.key, v.Text); err != nil {
						d.errorf(f.v, ff, "%v", err)
					}
					*map[string]*string{"cpus": &c.CPUs, "memory": &c.Memory, "cpuset": &c.CPUSet}[f.key] = v.Text
				}
			case "netns":
				c.Netns = d.enum(f.v, ff, "true", "false").Text == "true"
			case "link":
				if v := d.str(f.v, ff); v.Set {
					if err := checkCluster("link", v.Text); err != nil {
						d.errorf(f.v, ff, "%v", err)
					}
					c.Link = v.Text
				}
			case "roles":
				for _, v := range d.strList(f.v, ff) {
					c.Roles = append(c.Roles, v.Text)
				}
			case "options":
				for _, o := range d.fields(f.v, ff, nil) {
					if v := d.str(o.v, join(ff, o.key)); v.Set {
						c.Options[o.key] = v.Text
					}
				}
			case "timeout":
				if v := d.str(f.v, ff); v.Set {
					t, err := time.ParseDuration(v.Text)
					if err != nil || t <= 0 {
						d.errorf(f.v, ff, "%q: allowed: a duration such as 10m", v.Text)
					}
					c.Timeout = t
				}
			}
		}
		s.Clusters = append(s.Clusters, c)
	}
}

// withClusters starts the clusters of groups (those that need one: the
// cache tier's cluster, a store cluster, then the app cluster in front of
// it), runs fn with the names of the clusters each group key's runs use,
// and stops every cluster it started whatever happened, in the reverse
// order.
func (x *executor) withClusters(ctx context.Context, gs []group, fn func(map[string]ClusterNames) error) (err error) {
	var stops []func() error
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			if serr := stops[i](); serr != nil && err == nil {
				err = serr
			}
		}
	}()
	names := map[string]ClusterNames{}
	for _, g := range gs {
		up := func(cs *ClusterSpec, shape string) (string, error) {
			name, stop, uerr := x.upCluster(ctx, g, cs, shape)
			if uerr == nil {
				stops = append(stops, stop)
			}
			return name, uerr
		}
		var n ClusterNames
		if g.cache != nil {
			if n.Cache, err = up(g.cache, "1 node, the cache tier"); err != nil {
				return err
			}
		}
		store := ""
		if g.spec != nil {
			if store, err = up(g.spec, storeShape(g.spec)); err != nil {
				return err
			}
			n.Run = store
		}
		if g.app != nil {
			app := *g.app
			app.Options = map[string]string{}
			maps.Copy(app.Options, g.app.Options)
			if store != "" {
				app.Options[apptier.OptStore] = store
			}
			if n.Cache != "" {
				app.Options[apptier.OptCache] = n.Cache // the servers cache in it
			}
			if n.Run, err = up(&app, appShape(&app, store)); err != nil {
				return err
			}
		}
		names[g.key] = n
	}
	return fn(names)
}

// storeShape describes a store cluster for the progress line: "3 nodes +
// 1 replicas, links delay=1ms".
func storeShape(cs *ClusterSpec) string {
	shape := fmt.Sprintf("%d nodes", max(cs.Nodes, 1))
	if max(cs.Nodes, 1) == 1 {
		shape = "1 node"
	}
	if cs.Replicas > 0 {
		shape += fmt.Sprintf(" + %d replicas", cs.Replicas)
	}
	if nw := cs.NetworkText(); nw != "" {
		shape += ", " + nw
	}
	return shape
}

// upCluster starts one cluster of group g, recording it in the result,
// and returns its name and how to stop it (which records that too).
func (x *executor) upCluster(ctx context.Context, g group, cs *ClusterSpec, shape string) (string, func() error, error) {
	name := clusterName(cs.Engine, len(x.res.Clusters)+1)
	use := ClusterUse{Name: name, Engine: cs.Engine, Nodes: max(cs.Nodes, 1)}
	for _, ci := range g.combos {
		use.Combinations = append(use.Combinations, x.combos[ci].ID)
	}
	fmt.Fprintf(x.o.Stderr, "starting a local %s cluster (%s) for %s ...\n", cs.Engine, shape, strings.Join(use.Combinations, ", "))
	start := time.Now()
	st, serr := startCluster(ctx, cs, name)
	use.UpSeconds = time.Since(start).Seconds()
	if serr != nil {
		use.Error, use.Stopped = serr.Error(), true
		x.res.Clusters = append(x.res.Clusters, use)
		code := results.ExitUnfinished
		if ctx.Err() != nil {
			code = results.ExitInterrupted
		}
		return "", nil, &errAbort{results.WithCode(code, serr)}
	}
	use.Nodes = len(st.Nodes)
	x.res.Clusters = append(x.res.Clusters, use)
	idx := len(x.res.Clusters) - 1
	_ = x.save()
	stop := func() error {
		serr := stopCluster(st)
		x.res.Clusters[idx].Stopped = serr == nil
		if serr != nil {
			x.res.Clusters[idx].Error = metrics.Redact(serr.Error())
			fmt.Fprintf(x.o.Stderr, "warning: %v; stop it with `scalelab cluster down %s`\n", serr, name)
			return &errAbort{results.WithCode(results.ExitUnfinished, serr)}
		}
		fmt.Fprintf(x.o.Stderr, "stopped cluster %s\n", name)
		return nil
	}
	return name, stop, nil
}
