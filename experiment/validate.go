package experiment

import (
	"fmt"
	"strings"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

func registeredEngines() []string { return engine.Names() }

// validator holds what Validate learns while it checks a spec: the
// scenario (nil when unavailable), the engines the runs use, with where
// the file names them, and what was refused already (so that a
// combination's plan does not report it again).
type validator struct {
	s         *Spec
	d         *decoder
	scen      scenario.Scenario
	used      map[string]Pos
	usedOrder []string
	badEngine map[string]bool // unavailable, or no storage for the scenario
	badSet    map[string]bool // key=value settings refused
}

// Validate checks the spec against this build: the scenario and engines
// must be available, settings must exist and parse, clusters need an engine
// that can provision them, SLOs name operations the scenario has, and
// every combination must make a valid run, with a server for each engine
// that needs one. It reports every problem at once (an Errors).
func (s *Spec) Validate() error {
	if errs := s.validate(false); len(errs) > 0 {
		return errs.sorted()
	}
	return nil
}

// validate returns every problem Validate finds. partial says the spec
// lacks parts of the file Parse refused: the runner is then not asked to
// plan the combinations, whose load and levels are incomplete.
func (s *Spec) validate(partial bool) Errors {
	v := &validator{s: s, d: &decoder{file: s.File}, used: map[string]Pos{}, badEngine: map[string]bool{}, badSet: map[string]bool{}}
	v.scenario()
	v.engines()
	v.settings()
	v.clusters()
	v.app()
	v.search()
	v.slos()
	combos := s.matrix(v.d)
	v.combinations(combos, partial)
	return v.d.errs
}

// notAvailable is the error for a name this build lacks, with the
// names it has and the nearest of them.
func notAvailable(what, name string, avail []string) string {
	msg := fmt.Sprintf("%s %s is not available in this build; available: %s", what, name, strings.Join(avail, ", "))
	if near := setting.Nearest(name, avail); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return msg
}

// available reports whether this build has the engine.
func available(name string) bool { _, err := engine.Lookup(name); return err == nil }

// scenario looks the spec's scenario up.
func (v *validator) scenario() {
	if !v.s.Scenario.Set {
		return // missing: Parse says so
	}
	scen, err := scenario.Lookup(v.s.Scenario.Text)
	if err != nil {
		v.d.errAt(v.s.Scenario.Pos, "scenario", "%s", notAvailable("scenario", v.s.Scenario.Text, scenario.Names()))
		return
	}
	v.scen = scen
}

// use records an engine a run uses and checks that this build has it and
// that the scenario has storage for it.
func (v *validator) use(name string, pos Pos, field string) {
	if _, ok := v.used[name]; ok {
		return
	}
	v.used[name] = pos
	v.usedOrder = append(v.usedOrder, name)
	if !available(name) {
		v.badEngine[name] = true
		v.d.errAt(pos, field, "%s", notAvailable("engine", name, engine.Names()))
		return
	}
	if v.scen != nil && !scenario.Supports(v.scen, name) {
		v.badEngine[name] = true
		v.d.errAt(pos, field, "scenario %s has no storage for engine %s; it supports: %s", v.scen.Name(), name, strings.Join(v.scen.Engines(), ", "))
	}
}

// engines finds the engines the runs use: the engine factor's levels,
// the file's engine, or the default one.
func (v *validator) engines() {
	s := v.s
	engineFactor := false
	for _, f := range s.Factors {
		for _, l := range f.Levels {
			for _, a := range l.Assigns {
				if a.Key == "engine" {
					engineFactor = true
					v.use(a.Value, a.Pos, "factors."+f.Name)
				}
			}
		}
	}
	if s.Engine.Set {
		v.use(s.Engine.Text, s.Engine.Pos, "engine")
	} else if !engineFactor {
		pos, field := s.Scenario.Pos, "engine"
		stores := s.storeClusters()
		if len(stores) == 1 {
			pos, field = stores[0].Pos, "clusters."+stores[0].Engine
		} else if err := runner.CheckDefaultTarget(s.Target.Text); s.Target.Set && err != nil {
			v.d.errAt(s.Target.Pos, "target", "%v (in this file, the key engine:)", err)
		}
		v.use(s.DefaultEngine(), pos, field)
	}
}

// settings checks every setting the file and its factors give: a known
// key and a valid value for the engine or scenario that declares it.
func (v *validator) settings() {
	for _, a := range v.s.Settings {
		v.setting(a, "settings."+a.Key)
	}
	for _, f := range v.s.Factors {
		for _, l := range f.Levels {
			for _, a := range l.Assigns {
				if keyKind(a.Key) == "setting" {
					v.setting(a, "factors."+f.Name)
				}
			}
		}
	}
}

// setting checks one setting.
func (v *validator) setting(a Assign, field string) {
	prefix, _, _ := strings.Cut(a.Key, ".")
	var specs []setting.Spec
	switch {
	case v.scen != nil && (prefix == v.scen.Name() || scenario.Declares(v.scen, a.Key)):
		// the scenario's keys, its own and those it shares (cache.mode)
		specs = v.scen.Settings()
	case prefix == v.s.Scenario.Text:
		return // scenario unavailable: reported already
	default:
		e, err := engine.Lookup(prefix)
		if err != nil {
			v.badSet[a.Key+"="+a.Value] = true
			if _, ok := v.used[prefix]; !ok {
				v.d.errAt(a.Pos, field, "%s", v.unknownSetting(a.Key))
			} // else the engine is unavailable: reported already
			return
		}
		// An engine's setting, checked even when no run uses the engine
		// (a profile may have taken it out).
		specs = e.Settings()
	}
	set := setting.NewSet(specs...)
	if err := set.SetValue(a.Key, a.Value); err != nil {
		v.badSet[a.Key+"="+a.Value] = true
		v.d.errAt(a.Pos, field, "%v", err)
	}
}

// unknownSetting is the error for a setting no scenario or engine of the
// experiment declares.
func (v *validator) unknownSetting(key string) string {
	var all []string
	owners := []string{"scenario " + v.s.Scenario.Text}
	if v.scen != nil {
		for _, sp := range v.scen.Settings() {
			all = append(all, sp.Key)
		}
	}
	for _, name := range v.usedOrder {
		owners = append(owners, "engine "+name)
		if e, err := engine.Lookup(name); err == nil {
			for _, sp := range e.Settings() {
				all = append(all, sp.Key)
			}
		}
	}
	msg := fmt.Sprintf("setting %q belongs to none of this experiment's scenario and engines (%s)", key, strings.Join(owners, ", "))
	if near := setting.Nearest(key, all); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return msg
}

// clusters checks that a run uses each cluster's engine and that the
// engine can provision one.
func (v *validator) clusters() {
	caches := v.s.cacheEngines()
	for _, c := range v.s.Clusters {
		field := "clusters." + c.Engine
		if _, ok := v.used[c.Engine]; !ok && !caches[c.Engine] {
			v.d.errAt(c.Pos, field, "no run uses engine %s, as its store or its cache (a `cache: %s` level); engines of this experiment: %s", c.Engine, c.Engine, strings.Join(v.usedOrder, ", "))
			continue
		}
		if available(c.Engine) {
			if _, err := cluster.ForEngine(c.Engine); err != nil {
				v.d.errAt(c.Pos, field, "%v", err)
			}
		}
	}
}

// serves reports whether the scenario can stand behind an app tier
// (true when it is unavailable: that is reported already).
func (v *validator) serves() bool {
	if v.scen == nil {
		return true
	}
	_, ok := v.scen.(scenario.Server)
	return ok
}

// app checks that an app tier serves a web application.
func (v *validator) app() {
	if v.s.App != nil && !v.serves() {
		v.d.errAt(v.s.App.Pos, "app", "scenario %s is not a web application: an app tier serves records or mhealth", v.scen.Name())
	}
}

// search checks a knee search: an SLO to break, the load model its load
// needs, and no factor varying that load.
func (v *validator) search() {
	s := v.s
	if s.Search == nil {
		return
	}
	if len(s.SLO) == 0 {
		v.d.errAt(s.Search.Pos, "search", "a knee search needs an slo to find where it breaks, e.g. `slo: p95 < 1s`")
	}
	model := ""
	for _, a := range s.Load {
		if a.Key == "model" {
			model = a.Value
		}
	}
	if want := map[string]string{"users": "closed", "rate": "rate"}[s.Search.On]; model != "" && model != want {
		v.d.errAt(s.Search.Pos, "search.on", "a search on %s needs the %s model, but load.model is %s", s.Search.On, want, model)
	}
	for _, f := range s.Factors {
		if f.Name == s.Search.On {
			v.d.errAt(f.Pos, "factors."+f.Name, "the knee search varies %s itself; it cannot be a factor too", f.Name)
		}
	}
}

// planErrPos is where the file gives what the runner refused in a
// combination: the load field its error names (--users is load.users),
// else the level that makes the combination, else the file's load, else
// its scenario; a combination of the file's defaults has no line of its own.
func (v *validator) planErrPos(c *Combination, err error) Pos {
	msg := err.Error()
	for _, a := range c.Load {
		if strings.Contains(msg, "--"+strings.ReplaceAll(a.Key, "_", "-")+" ") && a.Pos != (Pos{}) {
			return a.Pos
		}
	}
	if c.pos != (Pos{}) {
		return c.pos
	}
	if len(v.s.Load) > 0 {
		return v.s.Load[0].Pos
	}
	return v.s.Scenario.Pos
}
