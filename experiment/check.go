package experiment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/slo"
)

// Gate is the outcome of checking a results directory against SLOs: a
// release gate (`scalelab check`).
type Gate struct {
	Dir   string     `json:"dir"`
	Kind  string     `json:"kind"` // run, matrix or knee
	SLO   []string   `json:"slo"`
	Items []GateItem `json:"items"`
	Pass  bool       `json:"pass"`
}

// GateItem is one run, or one combination of an experiment (checked on the
// mean over its measured repeats).
type GateItem struct {
	Name     string        `json:"name"`
	Outcomes []slo.Outcome `json:"outcomes"`
	Problems []string      `json:"problems,omitempty"` // the run did not finish, a check failed, ...
	// Detail says what a knee search's outcomes are of: the highest load
	// that met the objectives (the knee), or the lowest tried.
	Detail string `json:"detail,omitempty"`
	Pass   bool   `json:"pass"`
}

// ErrNotResults means a directory holds neither run.json nor
// experiment.json.
var ErrNotResults = errors.New("not a results directory")

// CheckDir checks a run's results directory (run.json) or an experiment's
// (experiment.json) against SLOs. Without SLOs, a run is checked against
// its recorded status and failures, and an experiment against its own SLO.
func CheckDir(dir string, slos []string) (*Gate, error) {
	exprs, err := slo.ParseList(slos)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, results.ExperimentFile)); err == nil {
		return checkExperiment(dir, exprs)
	}
	if _, err := os.Stat(filepath.Join(dir, results.RunFile)); err != nil {
		return nil, fmt.Errorf("%w: %s has no %s or %s", ErrNotResults, dir, results.RunFile, results.ExperimentFile)
	}
	doc, err := results.Read(dir)
	if err != nil {
		return nil, err
	}
	g := &Gate{Dir: dir, Kind: "run", SLO: texts(exprs)}
	it := GateItem{Name: dir}
	it.Problems = runProblems(doc, len(exprs) > 0)
	var ok bool
	it.Outcomes, ok = slo.Check(exprs, slo.FromRun(doc))
	it.Pass = ok && len(it.Problems) == 0
	g.Items, g.Pass = []GateItem{it}, it.Pass
	return g, nil
}

func texts(exprs []slo.Expr) []string {
	var out []string
	for _, e := range exprs {
		out = append(out, e.Text)
	}
	return out
}

// runProblems lists why a run cannot pass a gate whatever its figures;
// recorded SLO failures are left out when the SLOs are checked afresh.
func runProblems(doc *results.Run, freshSLO bool) []string {
	var out []string
	if doc.Status != results.StatusOK && doc.Status != results.StatusFailed {
		out = append(out, fmt.Sprintf("the run did not finish (status %s, exit code %d)", doc.Status, doc.ExitCode))
	}
	for _, f := range doc.Failures {
		if freshSLO && strings.HasPrefix(f, "SLO ") {
			continue
		}
		out = append(out, f)
	}
	if len(doc.Summary) == 0 && len(out) == 0 {
		out = append(out, "no operation was measured")
	}
	return out
}

func checkExperiment(dir string, exprs []slo.Expr) (*Gate, error) {
	r, err := ReadResult(dir)
	if err != nil {
		return nil, err
	}
	if len(exprs) == 0 {
		for _, s := range r.SLO {
			e, err := slo.Parse(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", results.ExperimentFile, err)
			}
			exprs = append(exprs, e)
		}
	}
	g := &Gate{Dir: dir, Kind: r.Kind, SLO: texts(exprs), Pass: true}
	if r.Status != results.StatusOK && r.Status != results.StatusFailed {
		g.Items = append(g.Items, GateItem{Name: r.Name, Problems: []string{fmt.Sprintf("the experiment did not finish (status %s)", r.Status)}})
		g.Pass = false
	}
	if r.Kind == results.KindKnee {
		if len(exprs) == 0 {
			return nil, fmt.Errorf("%s is a knee search with no slo of its own: give the objectives to check its steps against with --slo", dir)
		}
		if len(r.Knees) == 0 {
			g.Items = append(g.Items, GateItem{Name: r.Name, Problems: []string{"the knee search ran no step"}})
			g.Pass = false
		}
		for _, k := range r.Knees {
			it := checkKnee(dir, k, exprs)
			g.Items = append(g.Items, it)
			g.Pass = g.Pass && it.Pass
		}
		return g, nil
	}
	for _, c := range r.Combinations {
		it := GateItem{Name: c.ID + " " + c.Label}
		tables, problems := measuredTables(dir, c.Runs, true)
		it.Problems = append(it.Problems, problems...)
		if len(tables) == 0 {
			it.Problems = append(it.Problems, "no run was measured")
		}
		ok := true
		if len(tables) > 0 {
			it.Outcomes, ok = slo.Check(exprs, meanTable(tables))
		}
		it.Pass = ok && len(it.Problems) == 0
		g.Items = append(g.Items, it)
		g.Pass = g.Pass && it.Pass
	}
	return g, nil
}

// checkKnee checks a knee search's steps against the objectives, each on
// the mean over its measured runs as the search judged it (a step with a
// run that was not measured cannot meet them). The knee is the highest
// step that meets them: the search passes when there is one, with that
// step's outcomes; else it fails with the lowest step's.
func checkKnee(dir string, k Knee, exprs []slo.Expr) GateItem {
	it := GateItem{Name: k.Combination + " " + k.Label}
	unit := map[string]string{"users": "users", "rate": "ops/s"}[k.On]
	if len(k.Steps) == 0 {
		it.Problems = []string{"the knee search ran no step"}
		return it
	}
	steps := append([]KneeStep(nil), k.Steps...)
	sort.Slice(steps, func(i, j int) bool { return steps[i].Load < steps[j].Load })
	var lowest []string
	for i, st := range steps {
		outcomes, ok, problems := checkStep(dir, st, exprs)
		if i == 0 {
			it.Outcomes, lowest = outcomes, problems
		}
		if ok && len(problems) == 0 {
			it.Outcomes, it.Pass = outcomes, true
			it.Detail = fmt.Sprintf("knee: %g %s, the highest of %d steps that meets the objectives", st.Load, unit, len(steps))
		}
	}
	if !it.Pass {
		it.Detail = fmt.Sprintf("outcomes at %g %s, the lowest of %d steps", steps[0].Load, unit, len(steps))
		it.Problems = append(lowest, fmt.Sprintf("no step of the search met the objectives, down to %g %s", steps[0].Load, unit))
	}
	return it
}

// measuredTables reads the runs under dir: the SLO table of each measured
// run, and a problem for each run that cannot be read or was not
// measured, and, with runChecks, each measured run's own problems
// (runProblems).
func measuredTables(dir string, runs []results.RunRef, runChecks bool) ([]slo.Table, []string) {
	var tables []slo.Table
	var problems []string
	for _, run := range runs {
		doc, err := results.Read(filepath.Join(dir, run.Dir))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if !run.Measured {
			why := ""
			if run.Error != "" {
				why = ": " + run.Error
			}
			problems = append(problems, fmt.Sprintf("%s: not measured (status %s, exit code %d)%s", run.Dir, doc.Status, doc.ExitCode, why))
			continue
		}
		if runChecks {
			for _, p := range runProblems(doc, true) {
				problems = append(problems, run.Dir+": "+p)
			}
		}
		tables = append(tables, slo.FromRun(doc))
	}
	return tables, problems
}

// checkStep checks one knee step on the mean over its runs.
func checkStep(dir string, st KneeStep, exprs []slo.Expr) ([]slo.Outcome, bool, []string) {
	tables, problems := measuredTables(dir, st.Runs, false)
	if len(tables) == 0 {
		return nil, false, append(problems, "no run of the step was measured")
	}
	outcomes, ok := slo.Check(exprs, meanTable(tables))
	return outcomes, ok, problems
}
