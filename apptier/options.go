package apptier

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/cluster"
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

// parseOptions reads spec's options, saying what is wrong and what is
// allowed.
func parseOptions(spec cluster.Spec) (options, error) {
	o := options{servers: spec.Nodes, maxInFlight: 16, timeout: 30 * time.Second, balance: "roundrobin", check: time.Second}
	if o.servers == 0 {
		o.servers = 2
	}
	if o.servers < 1 || o.servers > MaxServers {
		return o, fmt.Errorf("app: --servers %d: allowed 1 to %d on one machine", o.servers, MaxServers)
	}
	if spec.Replicas > 0 || len(spec.Roles) > 0 || spec.Heap != "" {
		return o, fmt.Errorf("app: --replicas, --roles and --heap are store settings; an app cluster takes --servers, --scenario, --cluster STORE and --set")
	}
	o.scenario = spec.Options[OptScenario]
	if o.scenario == "" {
		return o, fmt.Errorf("app: --scenario is required (a web scenario: records, mhealth)")
	}
	if name := spec.Options[OptStore]; name != "" {
		st, err := cluster.Load(name)
		if err != nil {
			return o, fmt.Errorf("app: the store: %w", err)
		}
		if st.Engine == Name {
			return o, fmt.Errorf("app: --cluster %s is an app cluster; name the store cluster the servers use", name)
		}
		o.store = st
	}
	if name := spec.Options[OptCache]; name != "" {
		st, err := cluster.Load(name)
		if err != nil {
			return o, fmt.Errorf("app: the cache tier: %w", err)
		}
		o.cache = st
	}
	for k, v := range spec.Options {
		var err error
		switch {
		case k == OptScenario || k == OptStore || k == OptCache:
		case strings.HasPrefix(k, SetPrefix):
			key := strings.TrimPrefix(k, SetPrefix)
			if key == o.scenario+".secret_file" || key == o.scenario+".app" {
				return o, fmt.Errorf("app: --set %s: the app cluster sets it itself", key)
			}
			o.sets = append(o.sets, key+"="+v)
		case k == OptMaxInFlight:
			o.maxInFlight, err = strconv.Atoi(v)
			if err == nil && o.maxInFlight < 0 {
				err = fmt.Errorf("negative")
			}
		case k == OptMaxQueue:
			o.maxQueue, err = strconv.Atoi(v)
			if err == nil && o.maxQueue < 0 {
				err = fmt.Errorf("negative")
			}
		case k == OptProcs:
			o.procs, err = strconv.Atoi(v)
			if err == nil && o.procs < 0 {
				err = fmt.Errorf("negative")
			}
		case k == OptRequestTimeout:
			o.timeout, err = time.ParseDuration(v)
			if err == nil && o.timeout <= 0 {
				err = fmt.Errorf("not positive")
			}
		case k == OptCheck:
			o.check, err = time.ParseDuration(v)
			if err == nil && o.check < 100*time.Millisecond {
				err = fmt.Errorf("under 100ms")
			}
		case k == OptBalance:
			if v != "roundrobin" && v != "leastconn" {
				err = fmt.Errorf("allowed: roundrobin, leastconn")
			}
			o.balance = v
		default:
			return o, fmt.Errorf("app: unknown option %q; allowed: %s, %s, %s, %s, %s, %s (and --set SCENARIO.KEY=VALUE)", k, OptMaxInFlight, OptMaxQueue, OptProcs, OptRequestTimeout, OptBalance, OptCheck)
		}
		if err != nil {
			return o, fmt.Errorf("app: --opt %s=%s: %w", k, v, err)
		}
	}
	if err := (app.Config{MaxInFlight: o.maxInFlight, MaxQueue: o.maxQueue}).Check(); err != nil {
		return o, fmt.Errorf("app: --opt %s=%d, %s=%d: %w", OptMaxInFlight, o.maxInFlight, OptMaxQueue, o.maxQueue, err)
	}
	sort.Strings(o.sets)
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
