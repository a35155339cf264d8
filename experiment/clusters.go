package experiment

import (
	"context"
	"errors"
	"fmt"
	"github.com/scalelab/scalelab/cgroup"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cluster"
)

// group is the combinations that share a local cluster (or need none).
type group struct {
	key    string
	spec   *ClusterSpec // nil: no cluster
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

// groups partitions the combinations by cluster, in matrix order of first
// appearance; combinations without a cluster form one group.
func groups(combos []*Combination) []group {
	var out []group
	at := map[string]int{}
	for i, c := range combos {
		k := clusterKey(c.Cluster)
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, group{key: k, spec: c.Cluster})
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

// startCluster starts a group's cluster as `scalelab cluster up` does:
// state saved before and after Up; on failure, whatever started is stopped
// and the state removed.
func startCluster(ctx context.Context, cs *ClusterSpec, name string) (*cluster.State, error) {
	prov, err := cluster.ForEngine(cs.Engine)
	if err != nil {
		return nil, err
	}
	spec := cluster.Spec{Engine: cs.Engine, Name: name, Nodes: cs.Nodes, Replicas: cs.Replicas, Heap: cs.Heap,
		Roles: cs.Roles, Options: map[string]string{}}
	for k, v := range cs.Options {
		spec.Options[k] = v
	}
	st := &cluster.State{Name: name, Engine: cs.Engine, Created: time.Now().UTC(), Dir: cluster.Dir(name), Params: map[string]string{"started_by": "experiment"}}
	if prov.Engine() != cs.Engine {
		st.Kind = prov.Engine()
	}
	spec.Engine = prov.Engine()
	if spec.Limits, err = cs.limits(); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	if err := st.PrepareLimits(spec.Limits); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	if err := os.MkdirAll(st.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	if err := st.Save(); err != nil {
		_ = os.RemoveAll(st.Dir)
		return nil, err
	}
	if err := prepareNet(cs, prov, st); err != nil {
		_ = stopCluster(st)
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	timeout := cs.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	upCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	err = prov.Up(upCtx, spec, st)
	if err == nil {
		err = st.ApplyLinks()
	}
	if serr := st.Save(); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		_ = stopCluster(st)
		return nil, fmt.Errorf("start %s cluster %s: %w (stopped what had started)", cs.Engine, name, err)
	}
	st.Params["up_seconds"] = fmt.Sprintf("%.1f", time.Since(start).Seconds())
	_ = st.Save()
	return st, nil
}

// prepareNet gives the cluster its own network and links when it asks
// for them (netns, link), as cluster up --netns --link does.
func prepareNet(cs *ClusterSpec, prov cluster.Provisioner, st *cluster.State) error {
	links := cs.LinkSpecs()
	if !cs.Netns && len(links) == 0 {
		return nil
	}
	if err := st.PrepareNet(prov); err != nil {
		return err
	}
	if len(links) == 0 {
		return st.Save()
	}
	ls, err := cluster.ParseLinks(links)
	if err != nil {
		return err
	}
	return st.PrepareLinks(ls)
}

// stopCluster stops every node (through the provisioner's Down when it has
// one) and removes the cluster's state and data. It does not depend on the
// experiment's context: a cluster is stopped even after Ctrl-C.
func stopCluster(st *cluster.State) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errs []error
	if prov, err := cluster.ProvisionerOf(st); err == nil {
		if d, ok := prov.(cluster.Downer); ok {
			errs = append(errs, d.Down(ctx, st))
		}
	}
	errs = append(errs, cluster.StopAll(st, 20*time.Second))
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
