package experiment

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/scalelab/scalelab/setting"
	"github.com/scalelab/scalelab/slo"
)

// factors decodes the factors: each a key and its levels, a value each, or
// a named bundle whose levels are mappings of several keys.
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

// combinations decodes which level combinations run.
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

// repeats decodes how often each combination runs: a count or a
// confidence-interval rule.
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

// search decodes a knee search.
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
