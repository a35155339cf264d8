package experiment

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/setting"
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
		vectors = s.fullVectors()
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

// fullVectors lists every level vector, the last factor's level changing
// fastest; none when there are more than maxCombinations.
func (s *Spec) fullVectors() [][]int {
	total := 1
	for _, f := range s.Factors {
		total *= len(f.Levels)
		if total > maxCombinations {
			return nil
		}
	}
	var vectors [][]int
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
			return vectors
		}
	}
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
	for _, name := range slices.Sorted(maps.Keys(sel.Levels)) {
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

// assigned is what one combination sets, key by key, with the factor
// that sets each ("" for the file's own keys), in the order first set.
type assigned struct {
	by    map[string]assignedBy
	order []string
}

type assignedBy struct {
	a      Assign
	factor string
}

// put sets a key; two factors setting one key to different values is an
// error (false).
func (as *assigned) put(d *decoder, a Assign, factor string) bool {
	prev, ok := as.by[a.Key]
	if ok && prev.factor != "" && factor != "" && prev.a.Value != a.Value {
		d.errAt(a.Pos, "factors."+factor, "%s is set by factor %s too (to %q); one combination cannot set it twice", a.Key, prev.factor, prev.a.Value)
		return false
	}
	if !ok {
		as.order = append(as.order, a.Key)
	}
	as.by[a.Key] = assignedBy{a, factor}
	return true
}

// combination merges the file's settings with a level of every factor.
func (s *Spec) combination(d *decoder, v []int, name string, pos Pos) *Combination {
	c := &Combination{Label: name, pos: pos}
	as := &assigned{by: map[string]assignedBy{}}
	for _, a := range s.Load {
		as.put(d, a, "")
	}
	if s.Engine.Set {
		as.put(d, Assign{Key: "engine", Value: s.Engine.Text, Pos: s.Engine.Pos}, "")
	}
	var labels, changed []string
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
			if !as.put(d, a, f.Name) {
				return nil
			}
		}
	}
	if c.Label == "" {
		c.Label = s.label(labels, changed)
	}
	c.Engine = s.DefaultEngine()
	if e, ok := as.by["engine"]; ok {
		c.Engine = e.a.Value
	}
	if !s.place(d, c, as) {
		return nil
	}
	c.Cache = s.cacheCluster(c.Tiers)
	return c
}

// label names a combination the file does not name: by the levels it
// changes (max_changed), else by the level of every factor.
func (s *Spec) label(labels, changed []string) string {
	switch {
	case s.Combos.Mode == "max_changed" && len(changed) == 0:
		return "default"
	case s.Combos.Mode == "max_changed":
		return strings.Join(changed, " + ")
	case len(labels) == 0:
		return "default"
	}
	return strings.Join(labels, " ")
}

// place puts what a combination sets where its runs take it: settings,
// load fields, tiers, its app cluster and its store cluster. A setting of
// another engine than the combination's is an error (false).
func (s *Spec) place(d *decoder, c *Combination, as *assigned) bool {
	engines := s.engineNames()
	other := func(key string) (string, bool) {
		p, _, _ := strings.Cut(key, ".")
		return p, contains(engines, p) && p != c.Engine
	}
	for _, a := range s.Settings {
		if _, ok := other(a.Key); ok {
			continue // another engine's setting
		}
		if e, ok := as.by[a.Key]; ok && e.factor != "" {
			continue // a level sets it
		}
		c.Sets = append(c.Sets, a.Key+"="+a.Value)
	}
	var cl map[string]string
	appLevels := map[string]string{}
	for _, k := range as.order {
		e := as.by[k]
		switch keyKind(k) {
		case "setting":
			if p, ok := other(k); ok {
				d.errAt(e.a.Pos, "factors."+e.factor, "combination %q: %s is a setting of engine %s, but the combination runs engine %s; list the combinations explicitly (combinations: [...])", c.Label, k, p, c.Engine)
				return false
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
	c.Cluster = s.storeCluster(c.Engine, cl)
	c.App = s.appCluster(c, appLevels)
	return true
}

// storeCluster is the local cluster of a combination's store: the file's
// cluster of its engine with the levels' cluster fields laid over it (a
// cluster of its own when the file has none), nil for none.
func (s *Spec) storeCluster(eng string, levels map[string]string) *ClusterSpec {
	var out *ClusterSpec
	for _, cs := range s.Clusters {
		if cs.Engine == eng {
			cp := cs
			out = &cp
		}
	}
	if levels == nil {
		return out
	}
	if out == nil {
		out = &ClusterSpec{Engine: eng, Options: map[string]string{}, Timeout: 10 * time.Minute}
	}
	if n, ok := levels["nodes"]; ok {
		out.Nodes, _ = strconv.Atoi(n)
	}
	if n, ok := levels["replicas"]; ok {
		out.Replicas, _ = strconv.Atoi(n)
	}
	for k, p := range map[string]*string{"heap": &out.Heap, "cpus": &out.CPUs, "memory": &out.Memory, "cpuset": &out.CPUSet, "link": &out.Link} {
		if v, ok := levels[k]; ok {
			*p = v
		}
	}
	return out
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
