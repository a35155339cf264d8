package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// The experiment page reads experiment.json through its schema in
// package results (written by package experiment).

// ExperimentFile is the name of an experiment's result document.
const ExperimentFile = results.ExperimentFile

// IsExperiment reports whether dir is an experiment's results directory.
func IsExperiment(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ExperimentFile))
	return err == nil
}

// readExperiment reads dir's experiment.json and refuses a schema newer
// than this page reads.
func readExperiment(dir string) (*results.Experiment, error) {
	r, err := results.ReadExperiment(dir)
	if err != nil {
		return nil, err
	}
	if r.Schema > results.ExperimentSchema {
		return r, fmt.Errorf("%s has schema %d; this scalelab reads schema %d (upgrade scalelab)", ExperimentFile, r.Schema, results.ExperimentSchema)
	}
	return r, nil
}

// WriteExperiment writes the report page of the experiment in dir (from
// experiment.json and its runs' directories) to out, or to dir/report.html
// when out is empty. It returns the path written.
func WriteExperiment(dir, out string) (string, error) {
	r, err := readExperiment(dir)
	if err != nil {
		return "", err
	}
	v := buildExperimentView(r, dir)
	b, err := render(experimentTmpl, "experiment", v)
	if err != nil {
		return "", err
	}
	if out == "" {
		out = filepath.Join(dir, results.ReportFile)
	}
	return out, results.WriteFileAtomic(out, b)
}

// expFacts is the experiment page's header.
func expFacts(r *results.Experiment) []fact {
	var f facts
	add := f.add
	add("status", statusFact(r.Status, r.ExitCode))
	add("kind", map[string]string{"matrix": "matrix: combinations with repeats, compared with a baseline", "knee": "knee search: load raised until the SLO breaks"}[r.Kind])
	add("scenario", r.Scenario)
	file := r.File
	if r.Profile != "" {
		file += " (profile " + r.Profile + ")"
	}
	add("experiment file", file)
	var rep string
	switch rr := r.Repeats; {
	case rr.UntilCIWithinPct > 0:
		rep = fmt.Sprintf("until the %s CI of %s %s is within %s%% of its mean (%d to %d runs)", confPct(r.Confidence), rr.Metric, rr.Op, fmtNum(rr.UntilCIWithinPct), rr.Min, rr.Max)
	case rr.Fixed > 0:
		rep = fmt.Sprintf("%d per combination", rr.Fixed)
	}
	add("repeats", rep)
	add("order", r.Order)
	add("baseline", r.BaselineRule)
	add("SLO", strings.Join(r.SLO, ", "))
	if r.Confidence > 0 {
		add("confidence", fmt.Sprintf("%s intervals; Welch's t-test at %s", confPct(r.Confidence), trimNum(100*(1-r.Confidence), 1)+"%"))
	}
	t := r.Totals
	add("runs", fmt.Sprintf("%d runs (%d measured, %d could not finish), %s of running", t.Runs, t.Measured, t.Unfinished, fmtDuration(t.Seconds)))
	when := r.Start.Format("2006-01-02 15:04:05 MST")
	if r.End != nil {
		when += " to " + r.End.Format("2006-01-02 15:04:05")
	}
	add("when", when)
	h := r.Host
	add("host", fmt.Sprintf("%s, %d CPUs %s %s/%s", h.Hostname, h.CPUs, h.CPUModel, h.OS, h.Arch))
	add("scalelab", strings.TrimSpace(r.Scalelab.Version+" "+r.Scalelab.Go))
	add("command", strings.Join(r.Command, " "))
	return f
}

func nz(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}
