package experiment

import (
	"strings"
	"time"

	"github.com/scalelab/scalelab/slo"
)

// Value is a scalar from the file with its position; Set is false when the
// file does not give it.
type Value struct {
	Text string
	Pos  Pos
	Set  bool
}

// Assign sets one key (a setting such as opensearch.shards, a load field
// such as users, engine, or a cluster field such as nodes) to a value.
type Assign struct {
	Key   string
	Value string
	Pos   Pos // of the value
}

// Spec is a parsed experiment file. Parse checks its structure and every
// value it can check alone; Validate checks it against the scenarios,
// engines and provisioners of this build.
type Spec struct {
	File        string // path as given
	Source      []byte // the file's bytes, copied into the results directory
	Name        string
	Description string
	Scenario    Value
	Engine      Value // default engine; "engine" may also be a factor
	Target      Value
	Settings    []Assign // applied to every run (engine.* keys only to that engine's runs)
	Load        []Assign // load fields: model, users, think, duration, ...
	Clusters    []ClusterSpec
	App         *AppSpec // the app tier in front of the store (app.go); nil: none
	Factors     []Factor
	Combos      Combinations
	Repeats     Repeats
	Order       string // interleaved (default), randomized or grouped
	Baseline    *Selection
	SLO         []SLO
	Results     Value
	Search      *Search
	// ClusterLifetime is "group" (default: each cluster runs only while its
	// combinations run) or "experiment" (every cluster starts before the
	// first run and stops after the last, so interleaving spans clusters).
	ClusterLifetime string
	Profile         string   // the profiles applied, comma-separated, if any
	Profiles        []string // the profiles the file defines
}

// ClusterSpec asks for a local cluster of an engine, started before the
// runs that use it and stopped after them.
type ClusterSpec struct {
	Engine   string
	Pos      Pos
	Nodes    int
	Replicas int
	Heap     string
	CPUs     string // per-node limits (cgroup): cores, e.g. 0.5
	Memory   string // e.g. 1g
	CPUSet   string // e.g. 0-1
	Roles    []string
	Options  map[string]string
	Timeout  time.Duration
	// Netns puts each node in its own network namespace; Link is the
	// emulated links (--link values separated by ';'), which imply it.
	Netns bool
	Link  string
}

// NetworkText says what network the cluster's nodes have: "links
// delay=1ms", "own network" (--netns without links), or "" (loopback).
func (c *ClusterSpec) NetworkText() string {
	if l := c.LinkSpecs(); len(l) > 0 {
		return "links " + strings.Join(l, " ")
	}
	if c.Netns {
		return "own network"
	}
	return ""
}

// LinkSpecs is the cluster's --link values.
func (c *ClusterSpec) LinkSpecs() []string {
	var out []string
	for _, l := range strings.Split(c.Link, ";") {
		if l = strings.TrimSpace(l); l != "" && l != "none" {
			out = append(out, l)
		}
	}
	return out
}

// Factor is one setting varied over levels.
type Factor struct {
	Name   string
	Pos    Pos
	Levels []Level
	Bundle bool // levels are mappings of several keys
}

// Level is one level of a factor: a label and the keys it sets.
type Level struct {
	Label   string
	Pos     Pos
	Assigns []Assign
}

// Combinations says which level combinations run.
type Combinations struct {
	Mode       string // full, max_changed or list
	MaxChanged int
	List       []Selection
	Pos        Pos
}

// Selection picks a level per factor (factors left out take their first
// level); Name labels it.
type Selection struct {
	Name   string
	Levels map[string]string // factor name -> level label
	Pos    Pos
	pos    map[string]Pos
}

// Repeats says how often each combination runs.
type Repeats struct {
	Fixed int // a fixed count; 0 when adaptive
	// UntilCIWithin repeats until the 95 % CI half-width is within this
	// fraction of the mean (0.04 for 4 %), between Min and Max repeats.
	UntilCIWithin float64
	Min, Max      int
	Metric        string // slo figure key the rule watches; default throughput
	Op            string // operation; "" for the totals
	Pos           Pos
}

// SLO is one objective with its position.
type SLO struct {
	Expr slo.Expr
	Pos  Pos
}

// Search describes a knee search.
type Search struct {
	On        string  // users or rate
	Start     float64 // first load
	Max       float64 // highest load tried
	Precision float64 // stop bisecting when the bracket is within this fraction
	Repeats   int     // runs per step
	Pos       Pos
}

// Orders of the runs.
const (
	OrderInterleaved = "interleaved"
	OrderRandomized  = "randomized"
	OrderGrouped     = "grouped"
)

var topKeys = []string{"name", "description", "scenario", "engine", "target", "settings", "load", "clusters", "app",
	"factors", "combinations", "repeats", "order", "baseline", "slo", "results", "search", "profiles", "cluster_lifetime"}

// LoadKeys are the load fields a file, a factor or a level may set.
var LoadKeys = []string{"model", "users", "think", "duration", "warmup", "ops", "rate", "arrivals", "phases", "ramp_up", "loops", "seed", "drain", "fault", "segments"}

// TierKeys are the tiers beside the store a factor may vary: the cache
// tier's engine ("none": no cache), target, or local cluster (a redis or
// memcached cluster from `scalelab cluster up`, which implies the engine).
// A tier's settings are settings keyed by its role (cache.ENGINE.KEY).
var TierKeys = []string{"cache", "cache_target", "cache_cluster"}

// ClusterKeys are the cluster fields a factor may vary.
var ClusterKeys = []string{"nodes", "replicas", "heap", "cpus", "memory", "cpuset", "link"}

var clusterFields = []string{"nodes", "replicas", "heap", "cpus", "memory", "cpuset", "roles", "options", "timeout", "netns", "link"}

// MaxFileSize bounds an experiment file.
const MaxFileSize = 1 << 20
