package study

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/scalelab/scalelab/examples"
	"github.com/scalelab/scalelab/experiment"
	"github.com/scalelab/scalelab/results"
)

// Pick returns the combination that a selector's levels name: every
// factor given at that level, every other factor at its first level.
func Pick(factors []results.FactorInfo, combos []results.CombinationResult, levels map[string]string) (*results.CombinationResult, error) {
	want := map[string]string{}
	for _, f := range factors {
		if len(f.Levels) > 0 {
			want[f.Name] = f.Levels[0]
		}
	}
	var names []string
	for _, f := range factors {
		names = append(names, f.Name)
	}
	for k, v := range levels {
		i := slices.IndexFunc(factors, func(f results.FactorInfo) bool { return f.Name == k })
		if i < 0 {
			return nil, fmt.Errorf("no factor %q; the experiment's factors: %s", k, strings.Join(names, ", "))
		}
		if !slices.Contains(factors[i].Levels, v) {
			return nil, fmt.Errorf("factor %s has no level %q; its levels: %s", k, v, strings.Join(factors[i].Levels, ", "))
		}
		want[k] = v
	}
	for i := range combos {
		c := &combos[i]
		match := true
		for _, l := range c.Levels {
			if want[l.Factor] != l.Level {
				match = false
				break
			}
		}
		if match {
			return c, nil
		}
	}
	var w []string
	for k, v := range want {
		w = append(w, k+"="+v)
	}
	sort.Strings(w)
	return nil, fmt.Errorf("no combination %s in the experiment's matrix", strings.Join(w, " "))
}

// Resolve parses the experiment file a study names with the experiment
// profile its study profile applies, from the embedded examples.
func Resolve(e *Experiment, profile string) (*experiment.Spec, error) {
	return ResolveFS(examples.Files, e, profile)
}

// ResolveFS is Resolve from the files of fsys.
func ResolveFS(fsys fs.FS, e *Experiment, profile string) (*experiment.Spec, error) {
	p, ok := e.Profiles[profile]
	if !ok {
		return nil, fmt.Errorf("experiment %s: no study profile %q; allowed: %s", e.Name, profile, strings.Join(Profiles, ", "))
	}
	data, err := fs.ReadFile(fsys, e.Example)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: read examples/%s: %w", e.Name, e.Example, err)
	}
	s, err := experiment.Parse("examples/"+e.Example, data, p)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	return s, nil
}

// Matrix returns the factors and combinations an experiment file makes,
// in experiment.json's terms.
func Matrix(s *experiment.Spec) ([]results.FactorInfo, []results.CombinationResult, error) {
	combos, err := s.Matrix()
	if err != nil {
		return nil, nil, err
	}
	var fs []results.FactorInfo
	for _, f := range s.Factors {
		fi := results.FactorInfo{Name: f.Name}
		for _, l := range f.Levels {
			fi.Levels = append(fi.Levels, l.Label)
		}
		fs = append(fs, fi)
	}
	var cs []results.CombinationResult
	for _, c := range combos {
		cs = append(cs, results.CombinationResult{ID: c.ID, Label: c.Label, Levels: c.Levels, Engine: c.Engine})
	}
	return fs, cs, nil
}

// CheckAgainst checks a study against the experiment files of fsys at
// every study profile: each experiment's file and profile exist and
// parse, each finding's combinations are in its matrix, and each
// operation is one of ops[scenario] ("(all)" always is).
func CheckAgainst(s *Study, fsys fs.FS, ops map[string][]string) error {
	var errs []error
	for _, p := range Profiles {
		specs := map[string]*experiment.Spec{}
		for i := range s.Experiments {
			e := &s.Experiments[i]
			sp, err := ResolveFS(fsys, e, p)
			if err != nil {
				errs = append(errs, fmt.Errorf("study %s, profile %s: %w", s.ID, p, err))
				continue
			}
			specs[e.Name] = sp
		}
		for _, f := range s.Findings {
			if f.Measure == nil {
				continue
			}
			for _, sel := range []Selector{*f.Measure, f.Ref()} {
				sp := specs[sel.Experiment]
				if sp == nil {
					continue
				}
				where := fmt.Sprintf("study %s, profile %s, finding %s", s.ID, p, f.ID)
				factors, combos, err := Matrix(sp)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", where, err))
					continue
				}
				if _, err := Pick(factors, combos, sel.Levels); err != nil {
					errs = append(errs, fmt.Errorf("%s: %s: %w", where, sel.Experiment, err))
				}
				if sel.Op != AllOps && !slices.Contains(ops[sp.Scenario.Text], sel.Op) {
					errs = append(errs, fmt.Errorf("%s: scenario %s has no operation %q; it has: %s", where, sp.Scenario.Text, sel.Op, strings.Join(ops[sp.Scenario.Text], ", ")))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// AllOps is the operation name of a run's totals in experiment.json.
const AllOps = "(all)"
