package apptier

import (
	"fmt"
	"strings"
	"time"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/setting"
)

// options are an app cluster's resolved settings.
type options struct {
	scenario    string
	store       *cluster.State // nil: a SQLite file in the cluster's directory
	cache       *cluster.State // the cache tier's cluster; nil: none
	servers     int
	maxInFlight int
	maxQueue    int
	procs       int
	timeout     time.Duration
	balance     string
	check       time.Duration
	sets        []string // scenario settings, key=value, in key order
}

// MaxServers bounds an app cluster on one machine.
const MaxServers = 16

// Options declares what app clusters take: the servers (--servers), the
// scenario they serve (--scenario), the store and cache clusters
// (--cluster, --cache-cluster), each server's limits and the balancer's
// settings, and the scenario settings of every server (--set KEY=VALUE,
// option set.KEY).
func (Provisioner) Options() cluster.Options {
	return cluster.Options{
		Specs: []setting.Spec{
			cluster.NodesOption(2, MaxServers, "app servers behind the balancer"),
			{Key: OptScenario, Kind: setting.String, Default: "", Description: "the web scenario the servers serve (records, mhealth), required"},
			{Key: OptStore, Kind: setting.String, Default: "", Description: "the store cluster the servers use; \"\": a SQLite file of the app cluster's own"},
			{Key: OptCache, Kind: setting.String, Default: "", Description: "the cache tier's cluster (redis, memcached) the servers cache in, with --set cache.mode=shared"},
			{Key: OptMaxInFlight, Kind: setting.Int, Default: "16", Min: 0, Max: 1 << 20, Description: "requests each server works on at once"},
			{Key: OptMaxQueue, Kind: setting.Int, Default: "0", Min: 0, Max: 1 << 20, Description: "requests each server lets wait for a worker (more: 503 at once); 0: unbounded"},
			{Key: OptProcs, Kind: setting.Int, Default: "0", Min: 0, Max: 1024, Description: "GOMAXPROCS of each server; 0: the machine's CPUs"},
			{Key: OptRequestTimeout, Kind: setting.Duration, Default: "30s", Min: 0.001, Max: 3600, Description: "each server's request timeout"},
			{Key: OptBalance, Kind: setting.Enum, Default: "roundrobin", Allowed: []string{"roundrobin", "leastconn"}, Description: "how HAProxy picks a server"},
			{Key: OptCheck, Kind: setting.Duration, Default: "1s", Min: 0.1, Max: 60, Description: "the balancer's health-check interval"},
		},
		Free: &cluster.Free{What: SetPrefix + "SCENARIO.KEY scenario settings of every server (--set SCENARIO.KEY=VALUE)", Takes: func(key string) bool {
			return strings.HasPrefix(key, SetPrefix) && len(key) > len(SetPrefix)
		}},
	}
}

// parseOptions reads spec's options, saying what is wrong and what is
// allowed.
func parseOptions(spec cluster.Spec) (options, error) {
	r, err := cluster.Resolve(Provisioner{}, spec)
	if err != nil {
		return options{}, fmt.Errorf("app: %w", err)
	}
	o := options{servers: int(r.Get(cluster.OptNodes).Int()), scenario: r.Get(OptScenario).String(),
		maxInFlight: int(r.Get(OptMaxInFlight).Int()), maxQueue: int(r.Get(OptMaxQueue).Int()), procs: int(r.Get(OptProcs).Int()),
		timeout: r.Get(OptRequestTimeout).Duration(), balance: r.Get(OptBalance).String(), check: r.Get(OptCheck).Duration()}
	if o.scenario == "" {
		return o, fmt.Errorf("app: --scenario is required (a web scenario: records, mhealth)")
	}
	if name := r.Get(OptStore).String(); name != "" {
		st, err := cluster.Load(name)
		if err != nil {
			return o, fmt.Errorf("app: the store: %w", err)
		}
		if st.Engine == Name {
			return o, fmt.Errorf("app: --cluster %s is an app cluster; name the store cluster the servers use", name)
		}
		o.store = st
	}
	if name := r.Get(OptCache).String(); name != "" {
		st, err := cluster.Load(name)
		if err != nil {
			return o, fmt.Errorf("app: the cache tier: %w", err)
		}
		o.cache = st
	}
	for _, kv := range r.Free {
		key := strings.TrimPrefix(kv[0], SetPrefix)
		if key == o.scenario+".secret_file" || key == o.scenario+".app" {
			return o, fmt.Errorf("app: --set %s: the app cluster sets it itself", key)
		}
		o.sets = append(o.sets, key+"="+kv[1])
	}
	if err := (app.Config{MaxInFlight: o.maxInFlight, MaxQueue: o.maxQueue}).Check(); err != nil {
		return o, fmt.Errorf("app: --opt %s=%d, %s=%d: %w", OptMaxInFlight, o.maxInFlight, OptMaxQueue, o.maxQueue, err)
	}
	return o, nil
}

// CheckSpec says what is wrong with an app cluster's spec (its options,
// its store and cache clusters, --netns with a store it cannot reach)
// before anything starts.
func CheckSpec(spec cluster.Spec) error {
	o, err := parseOptions(spec)
	if err != nil {
		return err
	}
	if spec.Netns {
		return unroutable(o)
	}
	return nil
}
