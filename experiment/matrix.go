package experiment

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/segment"
	"github.com/scalelab/scalelab/setting"

	"github.com/scalelab/scalelab/results"
)

// Combination is one point of the matrix: a level of every factor, and
// what that makes of the run.
type Combination struct {
	ID       string       // c01, c02, ... in matrix order
	Label    string       // the levels, or the name the file gives
	Levels   []LevelRef   // one per factor, in factor order
	Engine   string       // engine of its runs
	Sets     []string     // key=value settings of its runs
	Load     []Assign     // load fields (file's, then levels')
	Tiers    []Assign     // tiers beside the store (cache, cache_target)
	Cluster  *ClusterSpec // local cluster its runs need; nil for none
	App      *ClusterSpec // the app cluster its runs drive (app.go); nil for none
	Cache    *ClusterSpec // the cache tier's local cluster (cachetier.go); nil for none
	Baseline bool         // a reference others are compared with
	// ComparedTo is the ID of the combination this one is compared with
	// (its own for a reference).
	ComparedTo string
	pos        Pos
}

// LevelRef names a factor's level (package results).
type LevelRef = results.LevelRef

// Matrix builds the combinations the file asks for and marks the
// baseline. Validate calls it; it needs the engines of this build only to
// route engine.* settings to their engine's runs.
func (s *Spec) Matrix() ([]*Combination, error) {
	d := &decoder{file: s.File}
	combos := s.matrix(d)
	if len(d.errs) > 0 {
		return nil, d.errs.sorted()
	}
	return combos, nil
}

func (s *Spec) matrix(d *decoder) []*Combination {
	var vectors [][]int
	var names []string
	var poss []Pos
	switch s.Combos.Mode {
	case "list":
		for _, sel := range s.Combos.List {
			if v, ok := s.resolve(d, sel, "combinations"); ok {
				vectors, names, poss = append(vectors, v), append(names, sel.Name), append(poss, sel.Pos)
			}
		}
	case "max_changed":
		vectors = s.changedVectors(s.Combos.MaxChanged, maxCombinations+1)
	default:
		total := 1
		for _, f := range s.Factors {
			total *= len(f.Levels)
			if total > maxCombinations {
				break
			}
		}
		if total > maxCombinations {
			break
		}
		idx := make([]int, len(s.Factors))
		for {
			vectors = append(vectors, append([]int(nil), idx...))
			k := len(idx) - 1
			for k >= 0 {
				idx[k]++
				if idx[k] < len(s.Factors[k].Levels) {
					break
				}
				idx[k] = 0
				k--
			}
			if k < 0 {
				break
			}
		}
	}
	for len(names) < len(vectors) {
		names, poss = append(names, ""), append(poss, Pos{})
	}
	if len(vectors) > maxCombinations || (len(vectors) == 0 && s.Combos.Mode == "full") {
		d.errAt(s.Combos.Pos, "combinations", "more than %d combinations; list the ones to run, or use {max_changed: N}", maxCombinations)
		return nil
	}
	var out []*Combination
	seen := map[string]string{}
	for i, v := range vectors {
		c := s.combination(d, v, names[i], poss[i])
		if c == nil {
			continue
		}
		c.ID = fmt.Sprintf("c%02d", len(out)+1)
		key := fmt.Sprint(v)
		if prev, dup := seen[key]; dup {
			d.errAt(poss[i], "combinations", "combination %q repeats %s", c.Label, prev)
			continue
		}
		seen[key] = c.ID
		out = append(out, c)
	}
	if len(out) > 0 && len(d.errs) == 0 {
		s.markBaseline(d, out, vectors)
	}
	return out
}

// maxCombinations bounds the matrix.
const maxCombinations = 10000

// changedVectors lists the level vectors that change at most n factors
// from their first level: the default, then singles, doubles, ..., each in
// factor order (a, b, then a+b, a+c, b+c), stopping after limit vectors.
func (s *Spec) changedVectors(n, limit int) [][]int {
	var out [][]int
	v := make([]int, len(s.Factors))
	// levels assigns every non-first level to the chosen factors.
	var levels func(chosen []int, i int)
	levels = func(chosen []int, i int) {
		if len(out) >= limit {
			return
		}
		if i == len(chosen) {
			out = append(out, append([]int(nil), v...))
			return
		}
		f := chosen[i]
		for l := 1; l < len(s.Factors[f].Levels); l++ {
			v[f] = l
			levels(chosen, i+1)
		}
		v[f] = 0
	}
	var choose func(chosen []int, from, k int)
	choose = func(chosen []int, from, k int) {
		if len(out) >= limit {
			return
		}
		if len(chosen) == k {
			levels(chosen, 0)
			return
		}
		for f := from; f < len(s.Factors); f++ {
			choose(append(chosen, f), f+1, k)
		}
	}
	for k := 0; k <= min(n, len(s.Factors)); k++ {
		choose(nil, 0, k)
	}
	return out
}

// resolve turns a selection into level indexes.
func (s *Spec) resolve(d *decoder, sel Selection, field string) ([]int, bool) {
	v := make([]int, len(s.Factors))
	ok := true
	var fnames []string
	for _, f := range s.Factors {
		fnames = append(fnames, f.Name)
	}
	keys := make([]string, 0, len(sel.Levels))
	for k := range sel.Levels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		label := sel.Levels[name]
		fi := -1
		for i, f := range s.Factors {
			if f.Name == name {
				fi = i
			}
		}
		if fi < 0 {
			msg := fmt.Sprintf("%q is not a factor", name)
			if len(fnames) > 0 {
				msg += "; factors: " + strings.Join(fnames, ", ")
			}
			if near := setting.Nearest(name, fnames); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			d.errAt(sel.pos[name], field, "%s", msg)
			ok = false
			continue
		}
		var labels []string
		li := -1
		for i, l := range s.Factors[fi].Levels {
			labels = append(labels, l.Label)
			if l.Label == label {
				li = i
			}
		}
		if li < 0 {
			msg := fmt.Sprintf("%q is not a level of %s; levels: %s", label, name, strings.Join(labels, ", "))
			if near := setting.Nearest(label, labels); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			d.errAt(sel.pos[name], join(field, name), "%s", msg)
			ok = false
			continue
		}
		v[fi] = li
	}
	return v, ok
}

// combination merges the file's settings with a level of every factor.
func (s *Spec) combination(d *decoder, v []int, name string, pos Pos) *Combination {
	c := &Combination{Label: name, pos: pos}
	var labels, changed []string
	type src struct {
		a      Assign
		factor string
	}
	set := map[string]src{}
	var order []string
	put := func(a Assign, factor string) bool {
		if prev, ok := set[a.Key]; ok && prev.factor != "" && factor != "" && prev.a.Value != a.Value {
			d.errAt(a.Pos, "factors."+factor, "%s is set by factor %s too (to %q); one combination cannot set it twice", a.Key, prev.factor, prev.a.Value)
			return false
		}
		if _, ok := set[a.Key]; !ok {
			order = append(order, a.Key)
		}
		set[a.Key] = src{a, factor}
		return true
	}
	for _, a := range s.Load {
		put(a, "")
	}
	if s.Engine.Set {
		put(Assign{Key: "engine", Value: s.Engine.Text, Pos: s.Engine.Pos}, "")
	}
	for fi, li := range v {
		f := s.Factors[fi]
		l := f.Levels[li]
		c.Levels = append(c.Levels, LevelRef{Factor: f.Name, Level: l.Label})
		labels = append(labels, f.Name+"="+l.Label)
		if li != 0 {
			changed = append(changed, f.Name+"="+l.Label)
			if c.pos == (Pos{}) {
				c.pos = l.Pos
			}
		}
		for _, a := range l.Assigns {
			if !put(a, f.Name) {
				return nil
			}
		}
	}
	if c.Label == "" {
		switch {
		case s.Combos.Mode == "max_changed" && len(changed) == 0:
			c.Label = "default"
		case s.Combos.Mode == "max_changed":
			c.Label = strings.Join(changed, " + ")
		case len(labels) == 0:
			c.Label = "default"
		default:
			c.Label = strings.Join(labels, " ")
		}
	}
	c.Engine = s.DefaultEngine()
	if e, ok := set["engine"]; ok {
		c.Engine = e.a.Value
	}
	engines := s.engineNames()
	for _, a := range s.Settings {
		if p, _, _ := strings.Cut(a.Key, "."); contains(engines, p) && p != c.Engine {
			continue // another engine's setting
		}
		if e, ok := set[a.Key]; ok && e.factor != "" {
			continue // a level sets it
		}
		c.Sets = append(c.Sets, a.Key+"="+a.Value)
	}
	var cl map[string]string
	appLevels := map[string]string{}
	for _, k := range order {
		e := set[k]
		switch keyKind(k) {
		case "setting":
			if p, _, _ := strings.Cut(k, "."); contains(engines, p) && p != c.Engine {
				d.errAt(e.a.Pos, "factors."+e.factor, "combination %q: %s is a setting of engine %s, but the combination runs engine %s; list the combinations explicitly (combinations: [...])", c.Label, k, p, c.Engine)
				return nil
			}
			c.Sets = append(c.Sets, k+"="+e.a.Value)
		case "load":
			c.Load = append(c.Load, e.a)
		case "tier":
			c.Tiers = append(c.Tiers, e.a)
		case "app":
			appLevels[appField(k)] = e.a.Value
		case "cluster":
			if cl == nil {
				cl = map[string]string{}
			}
			cl[k] = e.a.Value
		}
	}
	for _, cs := range s.Clusters {
		if cs.Engine == c.Engine {
			cp := cs
			c.Cluster = &cp
		}
	}
	if cl != nil {
		if c.Cluster == nil {
			c.Cluster = &ClusterSpec{Engine: c.Engine, Options: map[string]string{}, Timeout: 10 * time.Minute}
		}
		if n, ok := cl["nodes"]; ok {
			c.Cluster.Nodes, _ = strconv.Atoi(n)
		}
		if n, ok := cl["replicas"]; ok {
			c.Cluster.Replicas, _ = strconv.Atoi(n)
		}
		if h, ok := cl["heap"]; ok {
			c.Cluster.Heap = h
		}
		for k, p := range map[string]*string{"cpus": &c.Cluster.CPUs, "memory": &c.Cluster.Memory, "cpuset": &c.Cluster.CPUSet, "link": &c.Cluster.Link} {
			if v, ok := cl[k]; ok {
				*p = v
			}
		}
	}
	c.Cache = s.cacheCluster(c.Tiers)
	c.App = s.appCluster(c, appLevels)
	return c
}

// DefaultEngine is the engine of a combination that no `engine:` key or
// factor names: the engine of the file's only store cluster when it names
// exactly one (a cluster implies its engine, as `run --cluster` does; a
// cache tier's cluster does not count), else the embedded SQLite.
func (s *Spec) DefaultEngine() string {
	if s.Engine.Set {
		return s.Engine.Text
	}
	if stores := s.storeClusters(); len(stores) == 1 {
		return stores[0].Engine
	}
	return engine.Default
}

// engineNames lists the engines the file names, plus the registered ones.
func (s *Spec) engineNames() []string {
	names := registeredEngines()
	if s.Engine.Set {
		names = append(names, s.Engine.Text)
	}
	for _, f := range s.Factors {
		for _, l := range f.Levels {
			for _, a := range l.Assigns {
				if a.Key == "engine" {
					names = append(names, a.Value)
				}
			}
		}
	}
	for _, c := range s.Clusters {
		names = append(names, c.Engine)
	}
	return names
}

// markBaseline sets every combination's reference. Without `baseline:`
// it is the first combination; a name picks one combination; levels of
// every factor pick one too, while levels of some factors only compare each
// combination with the one that has those levels and its own levels of the
// other factors (all else equal), e.g. {engine: sqlite} per test.
func (s *Spec) markBaseline(d *decoder, combos []*Combination, vectors [][]int) {
	single := func(ref *Combination) {
		ref.Baseline = true
		for _, c := range combos {
			c.ComparedTo = ref.ID
		}
	}
	b := s.Baseline
	if b == nil {
		single(combos[0])
		return
	}
	if len(b.Levels) == 0 {
		var labels []string
		for _, c := range combos {
			if c.Label == b.Name || c.ID == b.Name {
				single(c)
				return
			}
			labels = append(labels, c.Label)
		}
		msg := fmt.Sprintf("%q names no combination; combinations: %s", b.Name, strings.Join(labels, "; "))
		if near := setting.Nearest(b.Name, labels); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		d.errAt(b.Pos, "baseline", "%s", msg)
		return
	}
	v, ok := s.resolve(d, *b, "baseline")
	if !ok {
		return
	}
	byVector := map[string]*Combination{}
	for i, c := range combos {
		byVector[fmt.Sprint(vectors[i])] = c
	}
	for i, c := range combos {
		t := append([]int(nil), vectors[i]...)
		for fi, f := range s.Factors {
			if _, ok := b.Levels[f.Name]; ok {
				t[fi] = v[fi]
			}
		}
		ref, ok := byVector[fmt.Sprint(t)]
		if !ok {
			var want []string
			for fi, f := range s.Factors {
				want = append(want, f.Name+"="+f.Levels[t[fi]].Label)
			}
			d.errAt(b.Pos, "baseline", "combination %s (%s) has no baseline: %s does not run; add it to combinations", c.ID, c.Label, strings.Join(want, " "))
			continue
		}
		c.ComparedTo = ref.ID
		ref.Baseline = true
	}
}

// BaselineRule describes how combinations are compared, for people.
func (s *Spec) BaselineRule(combos []*Combination) string {
	b := s.Baseline
	if b != nil && len(b.Levels) > 0 && len(b.Levels) < len(s.Factors) {
		var parts []string
		for _, f := range s.Factors {
			if l, ok := b.Levels[f.Name]; ok {
				parts = append(parts, f.Name+"="+l)
			}
		}
		return "the combination with " + strings.Join(parts, " ") + ", all else equal"
	}
	for _, c := range combos {
		if c.Baseline {
			return c.ID + " " + c.Label
		}
	}
	return ""
}

// RunOptions are the runner options of one run of a combination; repeat
// counts from 1 and shifts the seed (every combination of one repeat gets
// the same seed: common random numbers).
func (s *Spec) RunOptions(c *Combination, repeat int, out string, names ClusterNames) *runner.Options {
	o := &runner.Options{Scenario: s.Scenario.Text, Engine: c.Engine, Target: s.Target.Text, Cluster: names.Run,
		Sets: append([]string(nil), c.Sets...), Out: out, Drain: time.Second, Seed: 1, Given: map[string]bool{}}
	if names.Run != "" {
		o.Target = ""
	}
	for _, a := range c.Load {
		v := strings.TrimSpace(a.Value)
		o.Given[a.Key] = true
		switch a.Key {
		case "model":
			o.Model = v
		case "users":
			o.Users, _ = strconv.Atoi(v)
		case "think":
			o.Think = v
		case "duration":
			o.Duration, _ = time.ParseDuration(v)
		case "warmup":
			o.Warmup, _ = time.ParseDuration(v)
		case "drain":
			o.Drain, _ = time.ParseDuration(v)
		case "ops":
			o.Ops, _ = strconv.ParseInt(v, 10, 64)
		case "rate":
			o.Rate = v
		case "arrivals":
			o.Arrivals = v
		case "phases":
			o.Phases = v
		case "ramp_up":
			o.RampUp, _ = time.ParseDuration(v)
			o.Given["ramp-up"] = true
		case "loops":
			o.Loops, _ = strconv.Atoi(v)
		case "seed":
			o.Seed, _ = strconv.ParseUint(v, 10, 64)
		case "segments":
			n, _ := strconv.Atoi(v)
			o.Segment = segment.Segment{Count: n}
		case "fault":
			if v != "none" && v != "" {
				o.Faults = append(o.Faults, v)
			}
		}
	}
	cache := cacheTier(c.Tiers)
	if names.Cache != "" {
		cache.Cluster = names.Cache
	}
	if cache.Engine != "" || cache.Cluster != "" {
		cache.Role = scenario.RoleCache
		o.Tiers = append(o.Tiers, cache)
	}
	if repeat > 1 {
		o.Seed += uint64(repeat - 1)
	}
	o.Args = commandLine(o)
	return o
}

// commandLine is the `scalelab run` command equivalent to the options,
// recorded in run.json.
func commandLine(o *runner.Options) []string {
	args := []string{"scalelab", "run", o.Scenario, "--engine", o.Engine}
	for _, t := range o.Tiers {
		if t.Engine != "" {
			args = append(args, "--"+t.Role, t.Engine)
		}
		if t.Cluster != "" {
			args = append(args, "--"+t.Role+"-cluster", t.Cluster)
		}
		if t.Target != "" {
			args = append(args, "--"+t.Role+"-target", t.Target)
		}
	}
	if o.Cluster != "" {
		args = append(args, "--cluster", o.Cluster)
	}
	if o.Target != "" {
		args = append(args, "--target", o.Target)
	}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	if o.Given["users"] {
		args = append(args, "--users", strconv.Itoa(o.Users))
	}
	for _, f := range []struct{ name, v string }{{"think", o.Think}, {"rate", o.Rate}, {"arrivals", o.Arrivals}, {"phases", o.Phases}} {
		if f.v != "" {
			args = append(args, "--"+f.name, f.v)
		}
	}
	if o.Given["ramp-up"] {
		args = append(args, "--ramp-up", o.RampUp.String())
	}
	if o.Given["loops"] {
		args = append(args, "--loops", strconv.Itoa(o.Loops))
	}
	if o.Duration > 0 {
		args = append(args, "--duration", o.Duration.String())
	}
	if o.Warmup > 0 {
		args = append(args, "--warmup", o.Warmup.String())
	}
	if o.Ops > 0 {
		args = append(args, "--ops", strconv.FormatInt(o.Ops, 10))
	}
	args = append(args, "--seed", strconv.FormatUint(o.Seed, 10))
	for _, st := range o.Sets {
		args = append(args, "--set", st)
	}
	for _, f := range o.Faults {
		args = append(args, "--fault", f)
	}
	return append(args, "--out", o.Out)
}
