package results

import (
	"time"
)

// The experiment.json schema (an experiment's results directory), written
// by package experiment and read by the report.

// Files of an experiment's results directory (beside runs/, which holds
// one run's results directory per run).
const (
	ExperimentFile     = "experiment.json"
	ComparisonCSVFile  = "comparison.csv"
	ComparisonJSONFile = "comparison.json"
	KneeCSVFile        = "knee.csv"
	SpecFile           = "experiment.yaml" // a copy of the experiment file
	RunsDir            = "runs"
)

// ExperimentSchema is Experiment.Schema; it changes when a field changes meaning.
const ExperimentSchema = 1

// Kinds of experiment.
const (
	KindMatrix = "matrix" // combinations x repeats, compared with a baseline
	KindKnee   = "knee"   // a knee search per combination
)

// Experiment is experiment.json: what ran, every run's directory, the
// statistics, the comparison with the baseline, the SLO verdicts and, for a
// knee search, the curve. It is written when the experiment starts (status
// "running"), after every run, and at the end; a reader (the HTML report)
// needs nothing else but the runs' own directories, named in Runs[].Dir
// relative to the experiment's directory.
type Experiment struct {
	Schema      int          `json:"schema"`
	Kind        string       `json:"kind"` // matrix or knee
	Name        string       `json:"name"`
	Description string       `json:"description,omitempty"`
	File        string       `json:"file"`              // the experiment file as given
	Profile     string       `json:"profile,omitempty"` // the profile applied
	Scenario    string       `json:"scenario"`
	Status      string       `json:"status"` // running, ok, failed, interrupted
	ExitCode    int          `json:"exit_code"`
	Error       string       `json:"error,omitempty"`
	Failures    []string     `json:"failures,omitempty"` // failed SLOs and checks
	Notes       []string     `json:"notes,omitempty"`    // how the runs were ordered, clusters grouped, ...
	Command     []string     `json:"command"`
	Scalelab    Version      `json:"scalelab"`
	Host        Host         `json:"host"`
	Start       time.Time    `json:"start"`
	End         *time.Time   `json:"end,omitempty"`
	Order       string       `json:"order"` // interleaved, randomized or grouped
	Repeats     RepeatRule   `json:"repeats"`
	Factors     []FactorInfo `json:"factors"`
	// Baseline is the ID of the baseline combination. With a baseline
	// naming levels of some factors only, each combination is compared
	// with its own (CombinationResult.ComparedTo) and Baseline is the
	// first of them; BaselineRule says which in words.
	Baseline     string   `json:"baseline"`
	BaselineRule string   `json:"baseline_rule"`
	SLO          []string `json:"slo,omitempty"`
	// Confidence is the level of every interval; comparisons test at
	// 1 - Confidence.
	Confidence   float64             `json:"confidence"`
	Combinations []CombinationResult `json:"combinations"`
	// Comparison has a row per combination, operation and metric
	// (matrix experiments).
	Comparison []Row            `json:"comparison,omitempty"`
	Knees      []Knee           `json:"knees,omitempty"`    // knee experiments
	Clusters   []ClusterUse     `json:"clusters,omitempty"` // local clusters started and stopped
	Totals     ExperimentTotals `json:"totals"`
}

// ExperimentTotals counts the runs.
type ExperimentTotals struct {
	Runs       int     `json:"runs"`
	Measured   int     `json:"measured"`   // runs whose figures count
	Unfinished int     `json:"unfinished"` // runs that could not finish
	Seconds    float64 `json:"seconds"`    // wall time of the runs
}

// RepeatRule is how many times each combination ran.
type RepeatRule struct {
	Fixed int `json:"fixed,omitempty"`
	// UntilCIWithinPct repeats until the 95 % CI half-width of Metric is
	// within this percentage of its mean, between Min and Max repeats.
	UntilCIWithinPct float64 `json:"until_ci_within_pct,omitempty"`
	Min              int     `json:"min,omitempty"`
	Max              int     `json:"max,omitempty"`
	Metric           string  `json:"metric,omitempty"`
	Op               string  `json:"op,omitempty"`
}

// FactorInfo is a factor and its level labels.
type FactorInfo struct {
	Name   string   `json:"name"`
	Levels []string `json:"levels"`
}

// CombinationResult is one combination: its levels, runs and SLO verdict.
type CombinationResult struct {
	ID         string       `json:"id"`
	Label      string       `json:"label"`
	Levels     []LevelRef   `json:"levels"`
	Engine     string       `json:"engine"`
	Settings   []string     `json:"settings"`    // key=value given to its runs
	Baseline   bool         `json:"baseline"`    // others are compared with it
	ComparedTo string       `json:"compared_to"` // ID of the combination it is compared with
	Cluster    *ClusterInfo `json:"cluster,omitempty"`
	Runs       []RunRef     `json:"runs"`
	// Converged says whether an until_ci_within rule was met (nil for a
	// fixed count); CIHalfPct is the rule's metric's half-width then.
	Converged *bool    `json:"converged,omitempty"`
	CIHalfPct *float64 `json:"ci_half_pct,omitempty"`
	// SLO holds the objectives checked against the mean over repeats.
	SLO     []SLOOutcome `json:"slo,omitempty"`
	SLOPass *bool        `json:"slo_pass,omitempty"`
}

// ClusterInfo describes the local cluster a combination ran against.
type ClusterInfo struct {
	Engine   string   `json:"engine"`
	Nodes    int      `json:"nodes"`
	Replicas int      `json:"replicas,omitempty"`
	Heap     string   `json:"heap,omitempty"`
	Roles    []string `json:"roles,omitempty"`
}

// RunRef is one run of a combination.
type RunRef struct {
	Repeat   int       `json:"repeat"`
	Load     float64   `json:"load,omitempty"` // knee step: users or ops/s
	Dir      string    `json:"dir"`            // relative to the experiment directory
	Seed     uint64    `json:"seed"`
	Status   string    `json:"status"`
	ExitCode int       `json:"exit_code"`
	Error    string    `json:"error,omitempty"`
	Failures []string  `json:"failures,omitempty"`
	Measured bool      `json:"measured"` // its figures count in the statistics
	Start    time.Time `json:"start"`
	Seconds  float64   `json:"seconds"`
	// ThroughputPerS is the run's total throughput (all operations).
	ThroughputPerS float64 `json:"throughput_per_s"`
	// Saturation is the run's telemetry verdict: which tier saturated.
	Saturation string `json:"saturation,omitempty"`
}

// ClusterUse records a local cluster the experiment started and stopped.
type ClusterUse struct {
	Name         string   `json:"name"`
	Engine       string   `json:"engine"`
	Nodes        int      `json:"nodes"`
	Combinations []string `json:"combinations"`
	UpSeconds    float64  `json:"up_seconds"`
	Stopped      bool     `json:"stopped"`
	Error        string   `json:"error,omitempty"`
}

// Row compares one metric of one operation of one combination with the
// baseline: the mean over repeats with its 95 % CI, the difference, Welch's
// p-value and the verdict.
type Row struct {
	Combination    string    `json:"combination"` // ID
	Label          string    `json:"label"`
	Op             string    `json:"op"`     // operation, or "(all)" for the totals
	Metric         string    `json:"metric"` // throughput, mean, p50, p95, p99, error_rate
	Unit           string    `json:"unit"`   // ops/s, ms or fraction
	HigherIsBetter bool      `json:"higher_is_better"`
	Values         []float64 `json:"values"` // one per measured repeat
	Stat
	Baseline     bool     `json:"baseline"`    // the row of a reference combination
	ComparedTo   string   `json:"compared_to"` // ID of the baseline combination of this row
	BaselineMean *float64 `json:"baseline_mean"`
	Delta        *float64 `json:"delta"`     // mean - baseline mean
	DeltaPct     *float64 `json:"delta_pct"` // relative to the baseline mean
	T            *float64 `json:"t"`         // nil when neither side varies
	DF           *float64 `json:"df"`
	PValue       *float64 `json:"p_value"` // Welch's two-sided test
	Verdict      string   `json:"verdict"` // baseline, better, worse, no significant difference, insufficient data
}

// Stat summarises one metric over repeats.
type Stat struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"` // sample standard deviation (n-1); 0 for n < 2
	// CILow and CIHigh bound the 95 % confidence interval of the mean
	// (Student t with n-1 degrees of freedom); nil for n < 2.
	CILow  *float64 `json:"ci_low"`
	CIHigh *float64 `json:"ci_high"`
	// CIHalfPct is the CI's half-width as a percentage of |mean|; nil
	// when the CI is undefined or the mean is 0.
	CIHalfPct *float64 `json:"ci_half_pct"`
}

// Knee is the outcome of a knee search for one combination: the highest
// load that met the SLO, the lowest that broke it, and the curve.
type Knee struct {
	Combination string  `json:"combination"`
	Label       string  `json:"label"`
	On          string  `json:"on"` // users or rate (operations per second)
	Start       float64 `json:"start"`
	Max         float64 `json:"max"`
	Precision   float64 `json:"precision"` // bisection stops when broke - load <= precision x load
	Repeats     int     `json:"repeats"`   // runs per step
	// Load is the highest load that met the SLO; nil when none did.
	Load *float64 `json:"load"`
	// Broke is the lowest load that broke it; nil when none did up to Max.
	Broke   *float64 `json:"broke"`
	Summary string   `json:"summary"`
	// Saturation says which tier saturated at the knee: in the first load
	// that broke the SLO (else the highest that met it).
	Saturation string `json:"saturation,omitempty"`
	// Throughput is the total throughput at Load over its repeats, with
	// its 95 % CI.
	Throughput *Stat `json:"throughput,omitempty"`
	// Figures are the SLO's figures at Load with their 95 % CIs.
	Figures []StepFigure `json:"figures,omitempty"`
	Steps   []KneeStep   `json:"steps"` // sorted by load
}

// KneeStep is one load of the search.
type KneeStep struct {
	Load       float64      `json:"load"`
	Order      int          `json:"order"` // 1 for the first step run
	Pass       bool         `json:"pass"`
	Runs       []RunRef     `json:"runs"`
	Throughput Stat         `json:"throughput"`
	Figures    []StepFigure `json:"figures"`
	Outcomes   []SLOOutcome `json:"outcomes"` // the SLO against the mean over repeats
	// TooFewSamples says the step neither met nor broke the SLO: its runs
	// had too few samples for a figure the SLO needs (a p95 of a short
	// run at a low load), and every figure they had met it.
	TooFewSamples bool   `json:"too_few_samples,omitempty"`
	Saturation    string `json:"saturation,omitempty"` // the telemetry verdict of its last run
}

// StepFigure is one SLO figure over a step's repeats.
type StepFigure struct {
	Op     string `json:"op"`
	Metric string `json:"metric"`
	Stat
}

// LevelRef names a factor's level.
type LevelRef struct {
	Factor string `json:"factor"`
	Level  string `json:"level"`
}

// SLOOutcome is one service-level objective checked against a run's or
// an experiment's figures (package slo checks them).
type SLOOutcome struct {
	SLO    string   `json:"slo"`
	Op     string   `json:"op"`
	Metric string   `json:"metric"`
	Value  *float64 `json:"value"` // nil when undefined
	Limit  float64  `json:"limit"`
	Pass   bool     `json:"pass"`
	Detail string   `json:"detail"` // e.g. "p95 of read 3.2ms < 1s"
}

// ReadExperiment loads experiment.json from an experiment's directory.
func ReadExperiment(dir string) (*Experiment, error) {
	var r Experiment
	if err := readJSON(dir, ExperimentFile, "an experiment's results directory", &r, "schema"); err != nil {
		return nil, err
	}
	return &r, nil
}
