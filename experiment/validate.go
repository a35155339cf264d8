package experiment

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

func registeredEngines() []string { return engine.Names() }

// Validate checks the spec against this build: the scenario and engines
// must be available, settings must exist and parse, clusters need an engine
// that can provision them, and every combination must make a valid run. It
// reports every problem at once (an Errors).
func (s *Spec) Validate() error {
	d := &decoder{file: s.File}
	scen, scenErr := scenario.Lookup(s.Scenario.Text)
	if scenErr != nil {
		avail := scenario.Names()
		msg := fmt.Sprintf("scenario %s is not available in this build; available: %s", s.Scenario.Text, strings.Join(avail, ", "))
		if near := setting.Nearest(s.Scenario.Text, avail); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		d.errAt(s.Scenario.Pos, "scenario", "%s", msg)
	}
	// Engines the runs use, with where the file names them.
	used := map[string]Pos{}
	var usedOrder []string
	use := func(name string, pos Pos, field string) {
		if _, ok := used[name]; ok {
			return
		}
		used[name] = pos
		usedOrder = append(usedOrder, name)
		if _, err := engine.Lookup(name); err != nil {
			avail := engine.Names()
			msg := fmt.Sprintf("engine %s is not available in this build; available: %s", name, strings.Join(avail, ", "))
			if near := setting.Nearest(name, avail); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			d.errAt(pos, field, "%s", msg)
			return
		}
		if scenErr == nil && !scenario.Supports(scen, name) {
			d.errAt(pos, field, "scenario %s has no storage for engine %s; it supports: %s", scen.Name(), name, strings.Join(scen.Engines(), ", "))
		}
	}
	engineFactor := false
	for _, f := range s.Factors {
		for _, l := range f.Levels {
			for _, a := range l.Assigns {
				if a.Key == "engine" {
					engineFactor = true
					use(a.Value, a.Pos, "factors."+f.Name)
				}
			}
		}
	}
	if s.Engine.Set {
		use(s.Engine.Text, s.Engine.Pos, "engine")
	} else if !engineFactor {
		pos, field := s.Scenario.Pos, "engine"
		if stores := s.storeClusters(); len(stores) == 1 {
			pos, field = stores[0].Pos, "clusters."+stores[0].Engine
		}
		use(s.DefaultEngine(), pos, field)
	}
	available := func(name string) bool { _, err := engine.Lookup(name); return err == nil }

	// Settings: known key and a valid value for the engine or scenario
	// that declares it.
	check := func(a Assign, field string) {
		prefix, _, _ := strings.Cut(a.Key, ".")
		var specs []setting.Spec
		switch {
		case scenErr == nil && (prefix == scen.Name() || scenario.Declares(scen, a.Key)):
			// the scenario's keys, its own and those it shares (cache.mode)
			specs = scen.Settings()
		case prefix == s.Scenario.Text:
			return // scenario unavailable: reported above
		default:
			if e, err := engine.Lookup(prefix); err == nil {
				// An engine's setting, checked even when no run uses the
				// engine (a profile may have taken it out).
				specs = e.Settings()
				break
			}
			if _, ok := used[prefix]; ok {
				return // the engine is unavailable: reported above
			}
			var all []string
			owners := []string{"scenario " + s.Scenario.Text}
			if scenErr == nil {
				for _, sp := range scen.Settings() {
					all = append(all, sp.Key)
				}
			}
			for _, name := range usedOrder {
				owners = append(owners, "engine "+name)
				if e, err := engine.Lookup(name); err == nil {
					for _, sp := range e.Settings() {
						all = append(all, sp.Key)
					}
				}
			}
			msg := fmt.Sprintf("setting %q belongs to none of this experiment's scenario and engines (%s)", a.Key, strings.Join(owners, ", "))
			if near := setting.Nearest(a.Key, all); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			d.errAt(a.Pos, field, "%s", msg)
			return
		}
		set := setting.NewSet(specs...)
		if err := set.SetValue(a.Key, a.Value); err != nil {
			d.errAt(a.Pos, field, "%v", err)
		}
	}
	for _, a := range s.Settings {
		check(a, "settings."+a.Key)
	}
	for _, f := range s.Factors {
		for _, l := range f.Levels {
			for _, a := range l.Assigns {
				if keyKind(a.Key) == "setting" {
					check(a, "factors."+f.Name)
				}
			}
		}
	}
	caches := s.cacheEngines()
	for _, c := range s.Clusters {
		field := "clusters." + c.Engine
		if _, ok := used[c.Engine]; !ok && !caches[c.Engine] {
			d.errAt(c.Pos, field, "no run uses engine %s, as its store or its cache (a `cache: %s` level); engines of this experiment: %s", c.Engine, c.Engine, strings.Join(usedOrder, ", "))
			continue
		}
		if available(c.Engine) {
			if _, err := cluster.ForEngine(c.Engine); err != nil {
				d.errAt(c.Pos, field, "%v", err)
			}
		}
	}
	if s.App != nil && scenErr == nil {
		if _, ok := scen.(scenario.Server); !ok {
			d.errAt(s.App.Pos, "app", "scenario %s is not a web application: an app tier serves records or mhealth", scen.Name())
		}
	}
	if len(s.SLO) == 0 && s.Search != nil {
		d.errAt(s.Search.Pos, "search", "a knee search needs an slo to find where it breaks, e.g. `slo: p95 < 1s`")
	}
	if s.Search != nil {
		model := ""
		for _, a := range s.Load {
			if a.Key == "model" {
				model = a.Value
			}
		}
		if want := map[string]string{"users": "closed", "rate": "rate"}[s.Search.On]; model != "" && model != want {
			d.errAt(s.Search.Pos, "search.on", "a search on %s needs the %s model, but load.model is %s", s.Search.On, want, model)
		}
		for _, f := range s.Factors {
			if f.Name == s.Search.On {
				d.errAt(f.Pos, "factors."+f.Name, "the knee search varies %s itself; it cannot be a factor too", f.Name)
			}
		}
	}
	if len(d.errs) > 0 {
		return d.errs.sorted()
	}
	combos := s.matrix(d)
	if len(d.errs) > 0 {
		return d.errs.sorted()
	}
	// Every combination must make a valid run; the runner says why not.
	for _, c := range combos {
		if c.Cluster != nil && available(c.Engine) {
			if _, err := cluster.ForEngine(c.Engine); err != nil {
				d.errAt(c.pos, "combination "+c.Label, "%v", err)
				continue
			}
		}
		if c.App != nil && s.App == nil && scenErr == nil {
			if _, ok := scen.(scenario.Server); !ok {
				d.errAt(c.pos, "combination "+c.Label, "app.* factors: scenario %s is not a web application: an app tier serves records or mhealth", scen.Name())
				continue
			}
		}
		o := s.RunOptions(c, 1, filepath.Join("validate", c.ID), ClusterNames{})
		if c.Cluster != nil || c.App != nil {
			o.Faults = nil // node names exist once the cluster is up; the run checks them
		}
		if s.Search != nil {
			applySearchLoad(o, s.Search.On, max(s.Search.Start, 1))
		}
		if _, err := runner.NewPlan(o); err != nil {
			d.errAt(c.pos, fmt.Sprintf("combination %s (%s)", c.ID, c.Label), "%v", err)
		}
	}
	if len(d.errs) > 0 {
		return d.errs.sorted()
	}
	return nil
}
