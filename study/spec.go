// Package study sets scalelab's measurements beside the published figures
// of the studies it reproduces: the study files (package studies) parsed
// and checked, the verdict of each finding from the experiments' results,
// the runs of a study's experiments, and the study page (a terminal table
// and HTML).
package study

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/scalelab/scalelab/studies"
	"github.com/scalelab/scalelab/yamlerr"
)

// Study is one study file: what the study asked, its setup, the
// experiments that reproduce it here and its findings.
type Study struct {
	ID          string       `yaml:"id" json:"id"`
	Name        string       `yaml:"name" json:"name"`
	Title       string       `yaml:"title" json:"title"`
	Question    string       `yaml:"question" json:"question"`
	Setup       string       `yaml:"setup" json:"setup"`
	Experiments []Experiment `yaml:"experiments" json:"experiments"`
	Findings    []Finding    `yaml:"findings" json:"findings"`
	// File is the file the study came from (set by the loader).
	File string `yaml:"-" json:"file"`
}

// Experiment is an experiment file of examples/ that a study runs, with
// the experiment profile each study profile applies.
type Experiment struct {
	Name    string `yaml:"name" json:"name"`
	Example string `yaml:"example" json:"example"` // a file of examples/
	// Profiles maps a study profile (quick, full) to the experiment
	// file's profile ("" for the file as it is).
	Profiles map[string]string `yaml:"profiles" json:"profiles"`
	// Repeats maps a study profile to a fixed repeat count (0 or absent:
	// the file's rule).
	Repeats map[string]int `yaml:"repeats,omitempty" json:"repeats,omitempty"`
}

// Published is one figure as the study published it.
type Published struct {
	Label string  `yaml:"label" json:"label"`
	Value float64 `yaml:"value" json:"value"`
	Unit  string  `yaml:"unit" json:"unit"`
}

// Selector names one measured figure of an experiment's results: the
// combination (the factors' levels given; every factor not given at its
// first level), the operation ("(all)" for the totals) and the statistic.
type Selector struct {
	Experiment string `yaml:"experiment,omitempty" json:"experiment,omitempty"`
	// Levels pick the combination: the factors named at these levels,
	// every other factor at its first level ({} : the baseline). Kept in
	// JSON when empty, so that a study.json says "the baseline" as the
	// study file did.
	Levels map[string]string `yaml:"levels,omitempty" json:"levels"`
	Op     string            `yaml:"op,omitempty" json:"op,omitempty"`
	Metric string            `yaml:"metric,omitempty" json:"metric,omitempty"`
}

// Finding is one row of the study page.
type Finding struct {
	ID        string      `yaml:"id" json:"id"`
	Finding   string      `yaml:"finding" json:"finding"` // what the study found, in words
	Setup     string      `yaml:"setup" json:"setup"`
	Source    string      `yaml:"source" json:"source"` // the table or figure of the publication
	Published []Published `yaml:"published" json:"published"`
	// About is the ratio or direction the finding is about, measured
	// figure over reference figure (e.g. "manual refresh / default").
	About string `yaml:"about" json:"about"`
	// Expect is the study's direction of measure against reference:
	// higher, lower or same (no meaningful difference).
	Expect string `yaml:"expect,omitempty" json:"expect,omitempty"`
	// Large says the study's effect was large: agreement then needs
	// significance here.
	Large bool `yaml:"large,omitempty" json:"large,omitempty"`
	// Topology says the finding compares topologies (nodes, servers,
	// routers) whose study ran each node on a machine of its own: a row
	// whose runs saturated this one machine's CPUs is then not
	// reproducible here.
	Topology  bool      `yaml:"topology,omitempty" json:"topology,omitempty"`
	Measure   *Selector `yaml:"measure,omitempty" json:"measure,omitempty"`
	Reference *Selector `yaml:"reference,omitempty" json:"reference,omitempty"`
	// NotReproducible is why the finding cannot be reproduced here ("":
	// it can).
	NotReproducible string `yaml:"not_reproducible,omitempty" json:"not_reproducible,omitempty"`
}

// Directions a finding can expect.
const (
	Higher = "higher"
	Lower  = "lower"
	Same   = "same"
)

// Profiles of a study run.
var Profiles = []string{"quick", "full"}

// Metrics a selector can name (the rows of experiment.json's comparison).
var Metrics = []string{"throughput", "mean", "p50", "p90", "p95", "p99", "error_rate"}

// Ref returns the reference selector completed from the measure: a field
// it leaves empty is the measure's (levels: absent means the measure's
// combination; an empty map means the default combination).
func (f *Finding) Ref() Selector {
	r := *f.Measure
	if f.Reference == nil {
		return r
	}
	if f.Reference.Experiment != "" {
		r.Experiment = f.Reference.Experiment
	}
	switch {
	case f.Reference.Levels != nil:
		r.Levels = f.Reference.Levels
	case f.Reference.Experiment == "" && f.Reference.Op == "" && f.Reference.Metric == "":
		// a reference with nothing of its own is the baseline, as
		// `reference: {levels: {}}` reads back from a study.json written
		// before empty levels were kept
		r.Levels = map[string]string{}
	}
	if f.Reference.Op != "" {
		r.Op = f.Reference.Op
	}
	if f.Reference.Metric != "" {
		r.Metric = f.Reference.Metric
	}
	return r
}

// Parse reads one study file; the error names the file and every problem.
func Parse(file string, data []byte) (*Study, error) {
	var s Study
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if te := yamlerr.Tab(file, data, err); te != nil {
			return nil, fmt.Errorf("study file %w", te)
		}
		return nil, fmt.Errorf("study file %s: %w", file, err)
	}
	s.File = file
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("study file %s: %w", file, err)
	}
	return &s, nil
}

// Validate checks the file's structure: every row names its source and
// either a measurement with a direction or why it is not reproducible.
// Whether the experiments, profiles and operations exist is CheckAgainst's.
func (s *Study) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for field, v := range map[string]string{"id": s.ID, "name": s.Name, "title": s.Title, "question": s.Question, "setup": s.Setup} {
		if strings.TrimSpace(v) == "" {
			bad("%s: empty; every study states it", field)
		}
	}
	exps := map[string]bool{}
	for i, e := range s.Experiments {
		where := fmt.Sprintf("experiments[%d]", i)
		if e.Name == "" || e.Example == "" {
			bad("%s: needs name and example", where)
		}
		if exps[e.Name] {
			bad("%s: experiment %q named twice", where, e.Name)
		}
		exps[e.Name] = true
		for p := range e.Profiles {
			if !slices.Contains(Profiles, p) {
				bad("%s.profiles: %q is not a study profile; allowed: %s", where, p, strings.Join(Profiles, ", "))
			}
		}
		for _, p := range Profiles {
			if _, ok := e.Profiles[p]; !ok {
				bad("%s.profiles: no entry for %q (\"\" runs the file as it is)", where, p)
			}
		}
		for p, n := range e.Repeats {
			if !slices.Contains(Profiles, p) || n < 0 {
				bad("%s.repeats: %s: %d; allowed: quick or full, a count >= 0", where, p, n)
			}
		}
	}
	ids := map[string]bool{}
	for i, f := range s.Findings {
		where := fmt.Sprintf("findings[%d] (%s)", i, f.ID)
		if f.ID == "" || ids[f.ID] {
			bad("%s: every finding needs an id of its own", where)
		}
		ids[f.ID] = true
		if strings.TrimSpace(f.Source) == "" {
			bad("%s: source is empty; name the publication's table or figure", where)
		}
		if strings.TrimSpace(f.Finding) == "" || strings.TrimSpace(f.Setup) == "" || strings.TrimSpace(f.About) == "" {
			bad("%s: finding, setup and about are all needed", where)
		}
		for j, p := range f.Published {
			if p.Label == "" || p.Unit == "" {
				bad("%s: published[%d] needs a label and a unit", where, j)
			}
		}
		if f.NotReproducible != "" {
			if f.Measure != nil || f.Expect != "" {
				bad("%s: not_reproducible rows have no measure or expect", where)
			}
			continue
		}
		if !slices.Contains([]string{Higher, Lower, Same}, f.Expect) {
			bad("%s: expect %q; allowed: higher, lower, same", where, f.Expect)
		}
		if f.Measure == nil {
			bad("%s: needs a measure, or not_reproducible with the reason", where)
			continue
		}
		m, r := f.Measure, f.Ref()
		if !exps[m.Experiment] || !exps[r.Experiment] {
			bad("%s: experiment %q or %q is not among the study's experiments", where, m.Experiment, r.Experiment)
		}
		if m.Op == "" || !slices.Contains(Metrics, m.Metric) || !slices.Contains(Metrics, r.Metric) {
			bad("%s: measure needs op and a metric of %s", where, strings.Join(Metrics, ", "))
		}
		if f.Reference == nil {
			bad("%s: needs a reference (what the measure is compared with)", where)
		}
	}
	return errors.Join(errs...)
}

// All returns the embedded studies, ordered by id.
func All() ([]*Study, error) { return LoadFS(studies.Files) }

// LoadFS reads every *.yaml study file of fsys, ordered by id.
func LoadFS(fsys fs.FS) ([]*Study, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list study files: %w", err)
	}
	var out []*Study
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("read study file %s: %w", n, err)
		}
		s, err := Parse(path.Join("studies", n), data)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(n, s.ID+"-") {
			return nil, fmt.Errorf("study file %s: id %q does not match the file name (NNN-name.yaml)", n, s.ID)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Find returns the study whose id or name is key; the error lists the
// studies there are.
func Find(all []*Study, key string) (*Study, error) {
	var names []string
	for _, s := range all {
		if s.ID == key || s.Name == key || s.ID+"-"+s.Name == key || sameNumber(s.ID, key) {
			return s, nil
		}
		names = append(names, s.ID+" ("+s.Name+")")
	}
	return nil, fmt.Errorf("no study %q; there are: %s", key, strings.Join(names, ", "))
}

// sameNumber reports whether key is id's number written without its
// leading zeros ("4" for "004").
func sameNumber(id, key string) bool {
	n, err := strconv.Atoi(key)
	m, err2 := strconv.Atoi(id)
	return err == nil && err2 == nil && n == m
}

// ExperimentByName returns the study's experiment of that name.
func (s *Study) ExperimentByName(name string) *Experiment {
	for i := range s.Experiments {
		if s.Experiments[i].Name == name {
			return &s.Experiments[i]
		}
	}
	return nil
}
