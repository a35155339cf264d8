package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/fault"
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/setting"
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

// Load reads, parses and validates an experiment file, applying a profile
// when profile is not empty.
func Load(path, profile string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read experiment file: %w", err)
	}
	s, err := Parse(path, b, profile)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Parse parses an experiment file's bytes (file names it in errors). It
// needs no registry: Validate does the checks that depend on the build.
// The error is an Errors listing everything wrong.
func Parse(file string, data []byte, profile string) (*Spec, error) {
	d := &decoder{file: file}
	if len(data) > MaxFileSize {
		d.errAt(Pos{}, "", "the file is %d bytes; the limit is %d", len(data), MaxFileSize)
		return nil, d.errs
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		d.errAt(yamlErrPos(err), "", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, d.errs
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		d.errAt(Pos{Line: 1, Col: 1}, "", "the file is empty; it needs at least `scenario:`")
		return nil, d.errs
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "the file must be a mapping of keys (%s), got %s", strings.Join(topKeys, ", "), kindName(root))
		return nil, d.errs
	}
	s := &Spec{File: file, Source: data, Order: OrderInterleaved, ClusterLifetime: "group", Repeats: Repeats{Fixed: 3}, Combos: Combinations{Mode: "full"}}
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	s.Name = base
	root = d.applyProfile(s, root, profile)
	for _, e := range d.fields(root, "", topKeys) {
		switch e.key {
		case "name":
			if v := d.str(e.v, e.key); v.Set {
				s.Name = v.Text
			}
		case "description":
			s.Description = d.str(e.v, e.key).Text
		case "scenario":
			s.Scenario = d.str(e.v, e.key)
		case "engine":
			s.Engine = d.str(e.v, e.key)
		case "target":
			s.Target = d.str(e.v, e.key)
		case "settings":
			for _, f := range d.fields(e.v, e.key, nil) {
				if v := d.str(f.v, join(e.key, f.key)); v.Set {
					if !strings.Contains(f.key, ".") {
						d.errorf(f.k, e.key, "%q is not a setting key; settings are engine.key or scenario.key (see `scalelab list`)", f.key)
						continue
					}
					s.Settings = append(s.Settings, Assign{Key: f.key, Value: v.Text, Pos: v.Pos})
				}
			}
		case "load":
			for _, f := range d.fields(e.v, e.key, LoadKeys) {
				if v := d.str(f.v, join(e.key, f.key)); v.Set {
					if err := CheckLoad(f.key, v.Text); err != nil {
						d.errorf(f.v, join(e.key, f.key), "%v", err)
						continue
					}
					s.Load = append(s.Load, Assign{Key: f.key, Value: v.Text, Pos: v.Pos})
				}
			}
		case "clusters":
			d.clusters(s, e.v)
		case "app":
			d.app(s, e.v)
		case "factors":
			d.factors(s, e.v)
		case "combinations":
			d.combinations(s, e.v)
		case "repeats":
			d.repeats(s, e.v)
		case "order":
			if v := d.enum(e.v, e.key, OrderInterleaved, OrderRandomized, OrderGrouped); v.Set {
				s.Order = v.Text
			}
		case "baseline":
			s.Baseline = d.selection(e.v, e.key, true)
		case "slo":
			for _, v := range d.strList(e.v, e.key) {
				exprs, err := slo.ParseList([]string{v.Text})
				if err != nil {
					d.errAt(v.Pos, e.key, "%v", err)
					continue
				}
				for _, x := range exprs {
					s.SLO = append(s.SLO, SLO{Expr: x, Pos: v.Pos})
				}
			}
		case "results":
			s.Results = d.str(e.v, e.key)
		case "search":
			d.search(s, e.v)
		case "cluster_lifetime":
			if v := d.enum(e.v, e.key, "group", "experiment"); v.Set {
				s.ClusterLifetime = v.Text
			}
		case "profiles":
			// applied above
		}
	}
	if !s.Scenario.Set {
		d.errorf(root, "scenario", "missing: the scenario to run, e.g. `scenario: ycsb` (see `scalelab list`)")
	}
	if len(d.errs) > 0 {
		return nil, d.errs.sorted()
	}
	return s, nil
}

// yamlErrPos finds "line N" in a yaml.v3 syntax error.
func yamlErrPos(err error) Pos {
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(rest[:j]); err == nil {
			return Pos{Line: n, Col: 1}
		}
	}
	return Pos{}
}

// applyProfile merges profiles.NAME over the root mapping.
func (d *decoder) applyProfile(s *Spec, root *yaml.Node, profile string) *yaml.Node {
	var profiles *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := resolve(root.Content[i]); k.Kind == yaml.ScalarNode && k.Value == "profiles" {
			profiles = resolve(root.Content[i+1])
		}
	}
	byName := map[string]*yaml.Node{}
	if profiles != nil {
		for _, e := range d.fields(profiles, "profiles", nil) {
			if e.v.Kind != yaml.MappingNode {
				d.errorf(e.v, join("profiles", e.key), "a profile is a mapping of the keys it changes, got %s", kindName(e.v))
				continue
			}
			for _, f := range d.fields(e.v, join("profiles", e.key), topKeys) {
				if f.key == "profiles" {
					d.errorf(f.k, join("profiles", e.key), "a profile cannot define profiles")
				}
			}
			byName[e.key] = e.v
			s.Profiles = append(s.Profiles, e.key)
		}
	}
	if profile == "" {
		return root
	}
	// Several profiles apply in order: --profile opensearch,study.
	for _, name := range strings.Split(profile, ",") {
		root = d.applyOne(s, root, profiles, byName, strings.TrimSpace(name))
	}
	s.Profile = profile
	return root
}

func (d *decoder) applyOne(s *Spec, root, profiles *yaml.Node, byName map[string]*yaml.Node, profile string) *yaml.Node {
	over, ok := byName[profile]
	if !ok {
		msg := fmt.Sprintf("--profile %q: the file defines no such profile", profile)
		if len(s.Profiles) > 0 {
			msg += "; it defines: " + strings.Join(s.Profiles, ", ")
			if near := setting.Nearest(profile, s.Profiles); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
		}
		d.errAt(posOf(profiles), "profiles", "%s", msg)
		return root
	}
	return merge(root, over, 0)
}

// merge returns a copy of dst with src's keys laid over it: mappings merge
// key by key, ~ (null) removes a key, anything else is replaced.
func merge(dst, src *yaml.Node, depth int) *yaml.Node {
	out := *dst
	out.Content = append([]*yaml.Node(nil), dst.Content...)
	if depth > 8 {
		return &out
	}
	for i := 0; i+1 < len(src.Content); i += 2 {
		sk, sv := resolve(src.Content[i]), resolve(src.Content[i+1])
		if sk.Kind != yaml.ScalarNode || sk.Value == "profiles" {
			continue
		}
		found := false
		for j := 0; j+1 < len(out.Content); j += 2 {
			dk, dv := resolve(out.Content[j]), resolve(out.Content[j+1])
			if dk.Kind != yaml.ScalarNode || dk.Value != sk.Value {
				continue
			}
			found = true
			if sv.Kind == yaml.ScalarNode && sv.Tag == "!!null" {
				// ~ removes the key.
				out.Content = append(out.Content[:j:j], out.Content[j+2:]...)
				break
			}
			if dv.Kind == yaml.MappingNode && sv.Kind == yaml.MappingNode {
				out.Content[j+1] = merge(dv, sv, depth+1)
			} else {
				out.Content[j+1] = sv
			}
			break
		}
		if !found && !(sv.Kind == yaml.ScalarNode && sv.Tag == "!!null") {
			out.Content = append(out.Content, sk, sv)
		}
	}
	return &out
}

// CheckLoad checks a load field's value alone.
func CheckLoad(key, raw string) error {
	raw = strings.TrimSpace(raw)
	switch key {
	case "model":
		if !contains(load.ModelNames(), raw) {
			return fmt.Errorf("%q: allowed: %s", raw, strings.Join(load.ModelNames(), "|"))
		}
	case "users":
		if n, err := strconv.Atoi(raw); err != nil || n < 1 || n > 1_000_000 {
			return fmt.Errorf("%q: allowed: an integer in [1, 1000000]", raw)
		}
	case "loops":
		if n, err := strconv.Atoi(raw); err != nil || n < 0 || n > 1_000_000_000 {
			return fmt.Errorf("%q: allowed: an integer in [0, 1000000000] (loops per user; 0: until the duration or ops end the run)", raw)
		}
	case "ops":
		if n, err := strconv.ParseInt(raw, 10, 64); err != nil || n < 0 {
			return fmt.Errorf("%q: allowed: an integer >= 0 (0: no limit)", raw)
		}
	case "segments":
		if n, err := strconv.Atoi(raw); err != nil || n < 1 || n > MaxSegments {
			return fmt.Errorf("%q: allowed: an integer in [1, %d] (load processes per run, merged)", raw, MaxSegments)
		}
	case "seed":
		if _, err := strconv.ParseUint(raw, 10, 64); err != nil {
			return fmt.Errorf("%q: allowed: an integer >= 0", raw)
		}
	case "duration", "warmup", "drain", "ramp_up":
		if d, err := time.ParseDuration(raw); err != nil || d < 0 {
			return fmt.Errorf("%q: allowed: a duration such as 30s or 2m", raw)
		}
	case "think":
		if _, err := load.ParseThink(raw); err != nil {
			return err
		}
	case "rate":
		if _, err := load.ParseRate(raw); err != nil {
			return err
		}
	case "arrivals":
		if raw != "constant" && raw != "poisson" {
			return fmt.Errorf("%q: allowed: constant|poisson", raw)
		}
	case "phases":
		if _, err := load.ParsePhases(raw); err != nil {
			return err
		}
	case "fault":
		if raw != "none" {
			if _, err := fault.ParseList([]string{raw}); err != nil {
				return fmt.Errorf("%w (or none; several faults: comma-separated)", err)
			}
		}
	default:
		return fmt.Errorf("unknown load field %q; allowed: %s", key, strings.Join(LoadKeys, ", "))
	}
	return nil
}

// checkCluster checks a cluster field a factor varies.
func checkCluster(key, raw string) error {
	switch key {
	case "nodes":
		if n, err := strconv.Atoi(raw); err != nil || n < 1 || n > 16 {
			return fmt.Errorf("%q: allowed: an integer in [1, 16]", raw)
		}
	case "replicas":
		if n, err := strconv.Atoi(raw); err != nil || n < 0 || n > 8 {
			return fmt.Errorf("%q: allowed: an integer in [0, 8]", raw)
		}
	case "heap":
		if _, err := setting.ParseSize(raw); err != nil {
			return fmt.Errorf("%q: allowed: a size such as 512m or 1g", raw)
		}
	case "cpus":
		if _, err := cgroup.ParseCPUs(raw); err != nil {
			return err
		}
	case "memory":
		if _, err := cgroup.ParseMemory(raw); err != nil {
			return err
		}
	case "cpuset":
		if _, err := cgroup.ParseCPUSet(raw); err != nil {
			return err
		}
	case "link":
		if _, err := cluster.ParseLinks((&ClusterSpec{Link: raw}).LinkSpecs()); err != nil {
			return fmt.Errorf("%v (several separated by ';'; none: no emulation)", err)
		}
	}
	return nil
}

// checkTier checks a tier key's value: an engine (or none) for cache.
func checkTier(key, raw string) error {
	if key != "cache" || raw == "none" {
		return nil
	}
	if _, err := engine.Lookup(raw); err != nil {
		return fmt.Errorf("%q: %v; or none (no cache)", raw, err)
	}
	return nil
}

// keyKind classifies a key a factor or level sets.
func keyKind(key string) string {
	switch {
	case key == "engine":
		return "engine"
	case contains(ClusterKeys, key):
		return "cluster"
	case contains(LoadKeys, key):
		return "load"
	case contains(TierKeys, key):
		return "tier"
	case appField(key) != "":
		return "app"
	case strings.Contains(key, "."):
		return "setting"
	}
	return ""
}

// knownKeys lists the non-setting keys, for did-you-mean.
func knownKeys() []string {
	keys := append(append(append([]string{"engine"}, ClusterKeys...), LoadKeys...), TierKeys...)
	for _, f := range AppKeys {
		keys = append(keys, "app."+f)
	}
	return keys
}

// checkAssign checks one key=value a factor level sets.
func (d *decoder) checkAssign(n *yaml.Node, field, key, raw string) bool {
	var err error
	switch keyKind(key) {
	case "load":
		err = CheckLoad(key, raw)
	case "cluster":
		err = checkCluster(key, raw)
	case "tier":
		err = checkTier(key, raw)
	case "app":
		err = checkApp(appField(key), raw)
	case "engine", "setting":
	default:
		msg := fmt.Sprintf("%q is not something a level can set; allowed: engine, %s, %s, %s, app.FIELD (an app tier field), or a setting engine.key / scenario.key / cache.engine.key", key, strings.Join(ClusterKeys, ", "), strings.Join(LoadKeys, ", "), strings.Join(TierKeys, ", "))
		if near := setting.Nearest(key, knownKeys()); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		d.errorf(n, field, "%s", msg)
		return false
	}
	if err != nil {
		d.errorf(n, field, "%v", err)
		return false
	}
	return true
}

func (d *decoder) factors(s *Spec, n *yaml.Node) {
	for _, e := range d.fields(n, "factors", nil) {
		field := join("factors", e.key)
		f := Factor{Name: e.key, Pos: posOf(e.k)}
		seq := resolve(e.v)
		if seq.Kind != yaml.SequenceNode || len(seq.Content) == 0 {
			d.errorf(e.v, field, "expected a non-empty list of levels, e.g. [1, 2], got %s", kindName(seq))
			continue
		}
		kind := keyKind(e.key)
		labels := map[string]bool{}
		for i, c := range seq.Content {
			c = resolve(c)
			lf := fmt.Sprintf("%s[%d]", field, i+1)
			lv := Level{Pos: posOf(c)}
			if c.Kind == yaml.MappingNode {
				if kind != "" {
					d.errorf(c, lf, "the levels of %s are values; a mapping level belongs to a named factor bundling several keys (e.g. `config: [{label: fewer shards, opensearch.shards: 2}]`)", e.key)
					continue
				}
				f.Bundle = true
				var parts []string
				for _, g := range d.fields(c, lf, nil) {
					v, ok := d.scalar(g.v, join(lf, g.key))
					if !ok {
						continue
					}
					if g.key == "label" {
						lv.Label = v
						continue
					}
					if d.checkAssign(g.v, join(lf, g.key), g.key, v) {
						lv.Assigns = append(lv.Assigns, Assign{Key: g.key, Value: v, Pos: posOf(g.v)})
						parts = append(parts, g.key+"="+v)
					}
				}
				if lv.Label == "" {
					lv.Label = strings.Join(parts, ",")
					if lv.Label == "" {
						lv.Label = "default"
					}
				}
			} else {
				v, ok := d.scalar(c, lf)
				if !ok {
					continue
				}
				if kind == "" {
					msg := fmt.Sprintf("unknown factor %q: a factor is engine, %s, %s, app.FIELD (an app tier field), a setting engine.key / scenario.key, or a named bundle whose levels are mappings", e.key, strings.Join(ClusterKeys, ", "), strings.Join(LoadKeys, ", "))
					if near := setting.Nearest(e.key, knownKeys()); near != "" {
						msg += fmt.Sprintf(" (did you mean %q?)", near)
					}
					d.errorf(e.k, field, "%s", msg)
					break
				}
				if !d.checkAssign(c, lf, e.key, v) {
					continue
				}
				lv.Label = v
				lv.Assigns = []Assign{{Key: e.key, Value: v, Pos: posOf(c)}}
			}
			if labels[lv.Label] {
				d.errorf(c, lf, "duplicate level %q", lv.Label)
				continue
			}
			labels[lv.Label] = true
			f.Levels = append(f.Levels, lv)
		}
		if len(f.Levels) > 0 {
			s.Factors = append(s.Factors, f)
		}
	}
}

func (d *decoder) combinations(s *Spec, n *yaml.Node) {
	n = resolve(n)
	s.Combos.Pos = posOf(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if v := d.enum(n, "combinations", "full"); v.Set {
			s.Combos.Mode = "full"
		}
	case yaml.MappingNode:
		for _, e := range d.fields(n, "combinations", []string{"max_changed"}) {
			if v, ok := d.integer(e.v, "combinations.max_changed", 1, 64); ok {
				s.Combos.Mode, s.Combos.MaxChanged = "max_changed", v
			}
		}
	case yaml.SequenceNode:
		s.Combos.Mode = "list"
		for i, c := range n.Content {
			if sel := d.selection(c, fmt.Sprintf("combinations[%d]", i+1), false); sel != nil {
				s.Combos.List = append(s.Combos.List, *sel)
			}
		}
		if len(s.Combos.List) == 0 {
			d.errorf(n, "combinations", "the list is empty")
		}
	default:
		d.errorf(n, "combinations", "allowed: full, {max_changed: N}, or a list of level choices, got %s", kindName(n))
	}
}

// selection parses {factor: level, ..., name: NAME}; a scalar names a
// combination when allowName is set (baseline: default).
func (d *decoder) selection(n *yaml.Node, field string, allowName bool) *Selection {
	n = resolve(n)
	sel := &Selection{Levels: map[string]string{}, Pos: posOf(n), pos: map[string]Pos{}}
	if n.Kind == yaml.ScalarNode && allowName {
		v, ok := d.scalar(n, field)
		if !ok {
			return nil
		}
		sel.Name = v
		return sel
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, field, "expected a mapping of factor: level (and an optional name), got %s", kindName(n))
		return nil
	}
	for _, e := range d.fields(n, field, nil) {
		v, ok := d.scalar(e.v, join(field, e.key))
		if !ok {
			continue
		}
		if e.key == "name" {
			sel.Name = v
			continue
		}
		sel.Levels[e.key] = v
		sel.pos[e.key] = posOf(e.v)
	}
	return sel
}

func (d *decoder) repeats(s *Spec, n *yaml.Node) {
	n = resolve(n)
	s.Repeats.Pos = posOf(n)
	if n.Kind == yaml.ScalarNode {
		if v, ok := d.integer(n, "repeats", 1, 1000); ok {
			s.Repeats = Repeats{Fixed: v, Pos: posOf(n)}
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "repeats", "allowed: a count (5) or {until_ci_within: 4%%, min: 3, max: 30}, got %s", kindName(n))
		return
	}
	r := Repeats{Min: 3, Max: 30, Metric: slo.Throughput, Pos: posOf(n)}
	for _, e := range d.fields(n, "repeats", []string{"until_ci_within", "min", "max", "metric", "op"}) {
		field := join("repeats", e.key)
		switch e.key {
		case "until_ci_within":
			r.UntilCIWithin, _ = d.percent(e.v, field)
		case "min":
			r.Min, _ = d.integer(e.v, field, 2, 1000)
		case "max":
			r.Max, _ = d.integer(e.v, field, 2, 1000)
		case "metric":
			if v := d.enum(e.v, field, "throughput", "mean", "p50", "p90", "p95", "p99"); v.Set {
				r.Metric = v.Text
			}
		case "op":
			r.Op = d.str(e.v, field).Text
		}
	}
	if r.UntilCIWithin == 0 {
		d.errorf(n, "repeats", "a mapping needs until_ci_within (e.g. 4%%); for a fixed count write `repeats: 5`")
	}
	if r.Max < r.Min {
		d.errorf(n, "repeats", "max %d is below min %d", r.Max, r.Min)
	}
	if slo.IsLatency(r.Metric) && r.Op == "" {
		d.errorf(n, "repeats", "metric %s needs an op (latencies are per operation)", r.Metric)
	}
	s.Repeats = r
}

func (d *decoder) search(s *Spec, n *yaml.Node) {
	sr := &Search{On: "users", Precision: 0.1, Pos: posOf(resolve(n))}
	num := func(e entry, field string) float64 {
		v, ok := d.scalar(e.v, field)
		if !ok {
			return 0
		}
		x, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "/s"), 64)
		if err != nil || !(x > 0) || x > 1e9 {
			d.errorf(e.v, field, "%q: allowed: a positive number (users, or operations per second for rate)", v)
			return 0
		}
		return x
	}
	for _, e := range d.fields(n, "search", []string{"on", "start", "max", "precision", "repeats"}) {
		field := join("search", e.key)
		switch e.key {
		case "on":
			if v := d.enum(e.v, field, "users", "rate"); v.Set {
				sr.On = v.Text
			}
		case "start":
			sr.Start = num(e, field)
		case "max":
			sr.Max = num(e, field)
		case "precision":
			sr.Precision, _ = d.percent(e.v, field)
		case "repeats":
			sr.Repeats, _ = d.integer(e.v, field, 1, 100)
		}
	}
	if sr.Max > 0 && sr.Start > sr.Max {
		d.errorf(n, "search", "start %g is above max %g", sr.Start, sr.Max)
	}
	s.Search = sr
}
