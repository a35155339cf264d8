package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/setting"
	"github.com/scalelab/scalelab/slo"
	"github.com/scalelab/scalelab/yamlerr"
)

// Load reads, parses and validates an experiment file, applying a profile
// when profile is not empty. Every problem of the file is in the one
// error (an Errors): what Parse finds and what Validate finds, so that a
// file is fixed in one round.
func Load(path, profile string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read experiment file: %w", err)
	}
	s, errs := parse(path, b, profile)
	if s == nil {
		return nil, errs
	}
	errs = append(errs, s.validate(len(errs) > 0)...)
	if len(errs) > 0 {
		return nil, errs.sorted()
	}
	return s, nil
}

// isResults reports whether a mapping is an experiment's results
// (experiment.json): its schema and its combinations or totals, keys no
// experiment file has.
func isResults(root *yaml.Node) bool {
	keys := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		keys[root.Content[i].Value] = true
	}
	return keys["schema"] && (keys["combinations"] || keys["totals"])
}

// Parse parses an experiment file's bytes (file names it in errors). It
// needs no registry: Validate does the checks that depend on the build.
// The error is an Errors listing everything wrong.
func Parse(file string, data []byte, profile string) (*Spec, error) {
	s, errs := parse(file, data, profile)
	if len(errs) > 0 {
		return nil, errs.sorted()
	}
	return s, nil
}

// parse decodes what it can of the file: the spec without the parts in
// error, and the errors. The spec is nil when the file is not a mapping
// of keys at all (a YAML syntax error, an empty file, results).
func parse(file string, data []byte, profile string) (*Spec, Errors) {
	d := &decoder{file: file}
	if len(data) > MaxFileSize {
		d.errAt(Pos{}, "", "the file is %d bytes; the limit is %d", len(data), MaxFileSize)
		return nil, d.errs
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if te := yamlerr.Tab(file, data, err); te != nil {
			d.errAt(Pos{Line: te.Line, Col: te.Col}, "", "%s", yamlerr.TabMessage)
		} else {
			d.errAt(Pos{Line: yamlerr.Line(err), Col: 1}, "", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
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
	if isResults(root) {
		d.errAt(Pos{Line: 1, Col: 1}, "", "this is an experiment's results (%s), not an experiment file; use `scalelab experiment show %s`", results.ExperimentFile, filepath.Dir(file))
		return nil, d.errs
	}
	s := &Spec{File: file, Source: data, Order: OrderInterleaved, ClusterLifetime: "group", Repeats: Repeats{Fixed: 3}, Combos: Combinations{Mode: "full"}}
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	s.Name = base
	root = d.applyProfile(s, root, profile)
	for _, e := range d.fields(root, "", topKeys) {
		d.top(s, e)
	}
	if !s.Scenario.Set {
		d.errorf(root, "scenario", "missing: the scenario to run, e.g. `scenario: ycsb` (see `scalelab list`)")
	}
	return s, d.errs
}

// top decodes one top-level key of the file into s.
func (d *decoder) top(s *Spec, e entry) {
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
		// applied before the keys (applyProfile)
	}
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
