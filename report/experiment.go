package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scalelab/scalelab/results"
)

// The experiment page reads experiment.json as the experiment package
// writes it (schema 1). report cannot import that package (it imports the
// runner, which imports report), so the fields the page shows are declared
// again here, with the same JSON names; a test reads a real experiment's
// file to keep the two in step.

// ExperimentFile is the name of an experiment's result document.
const ExperimentFile = "experiment.json"

// expSchema is the experiment.json schema version this page reads.
const expSchema = 1

type expResult struct {
	Schema       int              `json:"schema"`
	Kind         string           `json:"kind"`
	Name         string           `json:"name"`
	Description  string           `json:"description"`
	File         string           `json:"file"`
	Profile      string           `json:"profile"`
	Scenario     string           `json:"scenario"`
	Status       string           `json:"status"`
	ExitCode     int              `json:"exit_code"`
	Error        string           `json:"error"`
	Failures     []string         `json:"failures"`
	Notes        []string         `json:"notes"`
	Command      []string         `json:"command"`
	Scalelab     results.Version  `json:"scalelab"`
	Host         results.Host     `json:"host"`
	Start        time.Time        `json:"start"`
	End          *time.Time       `json:"end"`
	Order        string           `json:"order"`
	Repeats      expRepeats       `json:"repeats"`
	Factors      []expFactor      `json:"factors"`
	Baseline     string           `json:"baseline"`
	BaselineRule string           `json:"baseline_rule"`
	SLO          []string         `json:"slo"`
	Confidence   float64          `json:"confidence"`
	Combinations []expCombination `json:"combinations"`
	Comparison   []expRow         `json:"comparison"`
	Knees        []expKnee        `json:"knees"`
	Clusters     []expClusterUse  `json:"clusters"`
	Totals       expTotals        `json:"totals"`
}

type expRepeats struct {
	Fixed            int     `json:"fixed"`
	UntilCIWithinPct float64 `json:"until_ci_within_pct"`
	Min              int     `json:"min"`
	Max              int     `json:"max"`
	Metric           string  `json:"metric"`
	Op               string  `json:"op"`
}

type expFactor struct {
	Name   string   `json:"name"`
	Levels []string `json:"levels"`
}

type expLevel struct {
	Factor string `json:"factor"`
	Level  string `json:"level"`
}

type expCombination struct {
	ID         string       `json:"id"`
	Label      string       `json:"label"`
	Levels     []expLevel   `json:"levels"`
	Engine     string       `json:"engine"`
	Settings   []string     `json:"settings"`
	Baseline   bool         `json:"baseline"`
	ComparedTo string       `json:"compared_to"`
	Cluster    *expCluster  `json:"cluster"`
	Runs       []expRun     `json:"runs"`
	Converged  *bool        `json:"converged"`
	CIHalfPct  *float64     `json:"ci_half_pct"`
	SLO        []expOutcome `json:"slo"`
	SLOPass    *bool        `json:"slo_pass"`
}

type expCluster struct {
	Engine   string   `json:"engine"`
	Nodes    int      `json:"nodes"`
	Replicas int      `json:"replicas"`
	Heap     string   `json:"heap"`
	Roles    []string `json:"roles"`
}

type expRun struct {
	Repeat         int       `json:"repeat"`
	Load           float64   `json:"load"`
	Dir            string    `json:"dir"`
	Seed           uint64    `json:"seed"`
	Status         string    `json:"status"`
	ExitCode       int       `json:"exit_code"`
	Error          string    `json:"error"`
	Failures       []string  `json:"failures"`
	Measured       bool      `json:"measured"`
	Start          time.Time `json:"start"`
	Seconds        float64   `json:"seconds"`
	ThroughputPerS float64   `json:"throughput_per_s"`
}

type expStat struct {
	N         int      `json:"n"`
	Mean      float64  `json:"mean"`
	SD        float64  `json:"sd"`
	CILow     *float64 `json:"ci_low"`
	CIHigh    *float64 `json:"ci_high"`
	CIHalfPct *float64 `json:"ci_half_pct"`
}

type expRow struct {
	Combination    string    `json:"combination"`
	Label          string    `json:"label"`
	Op             string    `json:"op"`
	Metric         string    `json:"metric"`
	Unit           string    `json:"unit"`
	HigherIsBetter bool      `json:"higher_is_better"`
	Values         []float64 `json:"values"`
	expStat
	Baseline     bool     `json:"baseline"`
	ComparedTo   string   `json:"compared_to"`
	BaselineMean *float64 `json:"baseline_mean"`
	Delta        *float64 `json:"delta"`
	DeltaPct     *float64 `json:"delta_pct"`
	T            *float64 `json:"t"`
	DF           *float64 `json:"df"`
	PValue       *float64 `json:"p_value"`
	Verdict      string   `json:"verdict"`
}

type expKnee struct {
	Combination string      `json:"combination"`
	Label       string      `json:"label"`
	On          string      `json:"on"`
	Start       float64     `json:"start"`
	Max         float64     `json:"max"`
	Precision   float64     `json:"precision"`
	Repeats     int         `json:"repeats"`
	Load        *float64    `json:"load"`
	Broke       *float64    `json:"broke"`
	Summary     string      `json:"summary"`
	Throughput  *expStat    `json:"throughput"`
	Figures     []expFigure `json:"figures"`
	Steps       []expStep   `json:"steps"`
}

type expStep struct {
	Load       float64      `json:"load"`
	Order      int          `json:"order"`
	Pass       bool         `json:"pass"`
	Runs       []expRun     `json:"runs"`
	Throughput expStat      `json:"throughput"`
	Figures    []expFigure  `json:"figures"`
	Outcomes   []expOutcome `json:"outcomes"`
}

type expFigure struct {
	Op     string `json:"op"`
	Metric string `json:"metric"`
	expStat
}

type expOutcome struct {
	SLO    string   `json:"slo"`
	Op     string   `json:"op"`
	Metric string   `json:"metric"`
	Value  *float64 `json:"value"`
	Limit  float64  `json:"limit"`
	Pass   bool     `json:"pass"`
	Detail string   `json:"detail"`
}

type expClusterUse struct {
	Name         string   `json:"name"`
	Engine       string   `json:"engine"`
	Nodes        int      `json:"nodes"`
	Combinations []string `json:"combinations"`
	UpSeconds    float64  `json:"up_seconds"`
	Stopped      bool     `json:"stopped"`
	Error        string   `json:"error"`
}

type expTotals struct {
	Runs       int     `json:"runs"`
	Measured   int     `json:"measured"`
	Unfinished int     `json:"unfinished"`
	Seconds    float64 `json:"seconds"`
}

// IsExperiment reports whether dir is an experiment's results directory.
func IsExperiment(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ExperimentFile))
	return err == nil
}

func readExperiment(dir string) (*expResult, error) {
	b, err := os.ReadFile(filepath.Join(dir, ExperimentFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is not an experiment's results directory: no %s", dir, ExperimentFile)
		}
		return nil, fmt.Errorf("read %s: %w", ExperimentFile, err)
	}
	var r expResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, ExperimentFile), err)
	}
	if r.Schema > expSchema {
		return &r, fmt.Errorf("%s has schema %d; this scalelab reads schema %d (upgrade scalelab)", ExperimentFile, r.Schema, expSchema)
	}
	return &r, nil
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
func expFacts(r *expResult) []fact {
	var f []fact
	add := func(k, v string) {
		if v != "" {
			f = append(f, fact{K: k, V: v})
		}
	}
	status := r.Status
	if r.ExitCode != 0 || status != results.StatusOK {
		status += fmt.Sprintf(" (exit code %d)", r.ExitCode)
	}
	add("status", status)
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
