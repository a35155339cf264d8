package experiment

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
	"github.com/scalelab/scalelab/slo"
)

// comboProblem is one problem found in combinations: the same message at
// the same place, whichever combinations have it.
type comboProblem struct {
	pos    Pos
	msg    string
	combos []*Combination
}

// comboProblems collects combination problems in the order found,
// merging the combinations that share one.
type comboProblems struct {
	list  []*comboProblem
	index map[string]*comboProblem
}

func (p *comboProblems) add(c *Combination, pos Pos, msg string) {
	if p.index == nil {
		p.index = map[string]*comboProblem{}
	}
	k := fmt.Sprintf("%d:%d:%s", pos.Line, pos.Col, msg)
	if q, ok := p.index[k]; ok {
		q.combos = append(q.combos, c)
		return
	}
	q := &comboProblem{pos: pos, msg: msg, combos: []*Combination{c}}
	p.index[k] = q
	p.list = append(p.list, q)
}

// maxNamed is how many combinations a problem names before "and N more".
const maxNamed = 6

// field names the combinations a problem concerns: "combination c02
// (engine=postgres)", "combinations c02 (...), c04 (...)".
func (q *comboProblem) field() string {
	var names []string
	for i, c := range q.combos {
		if i == maxNamed {
			names = append(names, fmt.Sprintf("and %d more", len(q.combos)-maxNamed))
			break
		}
		names = append(names, fmt.Sprintf("%s (%s)", c.ID, c.Label))
	}
	if len(q.combos) == 1 {
		return "combination " + names[0]
	}
	return "combinations " + strings.Join(names, ", ")
}

// combinations checks that every combination makes a valid run: its
// cluster's options, its app tier, a server for its store and its cache,
// and what the runner's plan refuses (not when partial: the file's parts
// Parse refused would make the plan's errors follow from those). A
// problem shared by several combinations is one error naming them all.
func (v *validator) combinations(combos []*Combination, partial bool) {
	var probs comboProblems
	names := PlanNames(combos)
	for _, c := range combos {
		if v.badEngine[c.Engine] || (v.scen == nil && v.s.Scenario.Set) {
			continue // refused already, for every combination that uses it
		}
		if msg := v.comboCluster(c); msg != "" {
			probs.add(c, c.pos, msg)
			continue
		}
		v.servers(&probs, c, names[c.ID])
		if partial || v.refusedSet(c) {
			continue
		}
		o := v.s.RunOptions(c, 1, filepath.Join("validate", c.ID), ClusterNames{})
		if c.Cluster != nil || c.App != nil {
			o.Faults = nil // node names exist once the cluster is up; the run checks them
		}
		if v.s.Search != nil {
			applySearchLoad(o, v.s.Search.On, max(v.s.Search.Start, 1))
		}
		if _, err := runner.NewPlan(o); err != nil {
			probs.add(c, v.planErrPos(c, err), err.Error())
		}
	}
	for _, q := range probs.list {
		v.d.errAt(q.pos, q.field(), "%s", q.msg)
	}
}

// comboCluster is what is wrong with a combination's local cluster or
// app tier ("" for nothing).
func (v *validator) comboCluster(c *Combination) string {
	if c.Cluster != nil && available(c.Engine) {
		prov, err := cluster.ForEngine(c.Engine)
		if err == nil { // the cluster's options, as its provisioner declares them
			_, err = cluster.Resolve(prov, cluster.Spec{Nodes: c.Cluster.Nodes, Replicas: c.Cluster.Replicas, Heap: c.Cluster.Heap, Roles: c.Cluster.Roles, Options: c.Cluster.Options})
		} else if v.s.hasCluster(c.Engine) {
			return "" // the file's clusters: entry is refused already (clusters)
		}
		if err != nil {
			return err.Error()
		}
	}
	if c.App != nil && v.s.App == nil && !v.serves() {
		return fmt.Sprintf("app.* factors: scenario %s is not a web application: an app tier serves records or mhealth", v.scen.Name())
	}
	return ""
}

// servers checks that the combination's store, and its cache tier, have
// a server when their engine needs one: the file's target, a cluster the
// experiment starts (a `clusters:` entry or a cluster factor's level), as
// the runner's rule for the engine decides.
func (v *validator) servers(probs *comboProblems, c *Combination, n ClusterNames) {
	if err := runner.CheckServer(c.Engine, v.s.Target.Text, n.Run != ""); err != nil {
		pos := v.used[c.Engine]
		if pos == (Pos{}) {
			pos = c.pos
		}
		probs.add(c, pos, fmt.Sprintf("%v; in an experiment file: `target: URL` for a server of yours, or `clusters: {%s: {}}` for a local one scalelab starts and stops", err, c.Engine))
	}
	cache := cacheTier(c.Tiers)
	if cache.Engine == "" || !available(cache.Engine) {
		return
	}
	if err := runner.CheckServer(cache.Engine, cache.Target, cache.Cluster != "" || n.Cache != ""); err != nil {
		probs.add(c, c.pos, fmt.Sprintf("cache %v; in an experiment file: a `cache_target: URL` level, or `clusters: {%s: {}}` for a local one scalelab starts and stops", err, cache.Engine))
	}
}

// refusedSet reports whether a setting of the combination was refused
// already (the plan would refuse it again).
func (v *validator) refusedSet(c *Combination) bool {
	for _, kv := range c.Sets {
		if v.badSet[kv] {
			return true
		}
	}
	return false
}

// slos checks that every SLO's operation (`for OP`) is one the scenario
// runs, with the nearest name when it is not.
func (v *validator) slos() {
	op, ok := v.scen.(scenario.Operator) // false when the scenario is unavailable
	if !ok {
		return
	}
	ops := op.Operations()
	for _, x := range v.s.SLO {
		if x.Expr.Op == "" || x.Expr.Op == slo.AllOps || contains(ops, x.Expr.Op) {
			continue
		}
		msg := fmt.Sprintf("%q: scenario %s has no operation %q; its operations: %s", x.Expr.Text, v.scen.Name(), x.Expr.Op, strings.Join(ops, ", "))
		if near := setting.Nearest(x.Expr.Op, ops); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		v.d.errAt(x.Pos, "slo", "%s", msg)
	}
}

// hasCluster reports whether the file's clusters: has an entry for the engine.
func (s *Spec) hasCluster(engine string) bool {
	for _, c := range s.Clusters {
		if c.Engine == engine {
			return true
		}
	}
	return false
}
