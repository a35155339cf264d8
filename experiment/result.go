package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/scalelab/scalelab/slo"
	"github.com/scalelab/scalelab/results"
)

// Files of an experiment's results directory (beside runs/, which holds
// one run's results directory per run).
const (
	ResultFile         = "experiment.json"
	ComparisonCSVFile  = "comparison.csv"
	ComparisonJSONFile = "comparison.json"
	KneeCSVFile        = "knee.csv"
	SpecFile           = "experiment.yaml" // a copy of the experiment file
	RunsDir            = "runs"
)

// SchemaVersion is Result.Schema; it changes when a field changes meaning.
const SchemaVersion = 1

// Kinds of experiment.
const (
	KindMatrix = "matrix" // combinations x repeats, compared with a baseline
	KindKnee   = "knee"   // a knee search per combination
)

// Result is experiment.json: what ran, every run's directory, the
// statistics, the comparison with the baseline, the SLO verdicts and, for a
// knee search, the curve. It is written when the experiment starts (status
// "running"), after every run, and at the end; a reader (the HTML report)
// needs nothing else but the runs' own directories, named in Runs[].Dir
// relative to the experiment's directory.
type Result struct {
	Schema      int             `json:"schema"`
	Kind        string          `json:"kind"` // matrix or knee
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	File        string          `json:"file"`              // the experiment file as given
	Profile     string          `json:"profile,omitempty"` // the profile applied
	Scenario    string          `json:"scenario"`
	Status      string          `json:"status"` // running, ok, failed, interrupted
	ExitCode    int             `json:"exit_code"`
	Error       string          `json:"error,omitempty"`
	Failures    []string        `json:"failures,omitempty"` // failed SLOs and checks
	Notes       []string        `json:"notes,omitempty"`    // how the runs were ordered, clusters grouped, ...
	Command     []string        `json:"command"`
	Scalelab    results.Version `json:"scalelab"`
	Host        results.Host    `json:"host"`
	Start       time.Time       `json:"start"`
	End         *time.Time      `json:"end,omitempty"`
	Order       string          `json:"order"` // interleaved, randomized or grouped
	Repeats     RepeatRule      `json:"repeats"`
	Factors     []FactorInfo    `json:"factors"`
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
	Comparison []Row         `json:"comparison,omitempty"`
	Knees      []Knee        `json:"knees,omitempty"`    // knee experiments
	Clusters   []ClusterUse  `json:"clusters,omitempty"` // local clusters started and stopped
	Totals     ResultTotals  `json:"totals"`
	tables     [][]slo.Table // per combination, per measured run
}

// ResultTotals counts the runs.
type ResultTotals struct {
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
	SLO     []slo.Outcome `json:"slo,omitempty"`
	SLOPass *bool         `json:"slo_pass,omitempty"`
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

// compared are the metrics of the comparison, in table order.
var compared = []struct {
	metric, unit string
	higher, all  bool // higher is better; also for the totals
}{
	{slo.Throughput, "ops/s", true, true},
	{slo.Mean, "ms", false, false},
	{slo.P50, "ms", false, false},
	{slo.P90, "ms", false, false},
	{slo.P95, "ms", false, false},
	{slo.P99, "ms", false, false},
	{slo.ErrorRate, "fraction", false, true},
}

// ReadResult loads experiment.json from an experiment's directory.
func ReadResult(dir string) (*Result, error) {
	b, err := os.ReadFile(filepath.Join(dir, ResultFile))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ResultFile, err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, ResultFile), err)
	}
	return &r, nil
}

// values collects a metric over measured runs.
func values(tables []slo.Table, op, metric string) []float64 {
	var out []float64
	for _, t := range tables {
		if f, ok := t[op]; ok {
			if v, ok := f[metric]; ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// opsOf lists the operations seen in any table, (all) first.
func opsOf(tables ...[]slo.Table) []string {
	seen := map[string]bool{}
	for _, ts := range tables {
		for _, t := range ts {
			for op := range t {
				seen[op] = true
			}
		}
	}
	var ops []string
	for op := range seen {
		if op != slo.AllOps {
			ops = append(ops, op)
		}
	}
	sort.Strings(ops)
	return append([]string{slo.AllOps}, ops...)
}

// meanTable averages each figure over the tables (over the runs that have
// it: a percentile undefined in one run is left out of that run only).
func meanTable(tables []slo.Table) slo.Table {
	out := slo.Table{}
	if len(tables) == 0 {
		return out
	}
	for _, op := range opsOf(tables) {
		f := slo.Figures{}
		for _, m := range []string{slo.Throughput, slo.ErrorRate, slo.ErrorCount, slo.Mean, slo.P50, slo.P90, slo.P95, slo.P99, slo.P999, slo.Max} {
			if vs := values(tables, op, m); len(vs) > 0 {
				s := Summarize(vs)
				f[m] = s.Mean
			}
		}
		out[op] = f
	}
	return out
}

// compare computes the comparison rows of every combination against its
// baseline.
func compare(combos []CombinationResult, tables [][]slo.Table) []Row {
	var rows []Row
	ops := opsOf(tables...)
	index := map[string]int{}
	for i, c := range combos {
		index[c.ID] = i
	}
	for ci, c := range combos {
		baseline, ok := index[c.ComparedTo]
		if !ok {
			baseline = ci
		}
		for _, op := range ops {
			for _, m := range compared {
				if op == slo.AllOps && !m.all {
					continue
				}
				vs := values(tables[ci], op, m.metric)
				if len(vs) == 0 {
					continue
				}
				r := Row{Combination: c.ID, Label: c.Label, Op: op, Metric: m.metric, Unit: m.unit, HigherIsBetter: m.higher,
					Values: vs, Stat: Summarize(vs), Baseline: ci == baseline, ComparedTo: combos[baseline].ID}
				if ci == baseline {
					r.Verdict = VerdictBaseline
					rows = append(rows, r)
					continue
				}
				base := values(tables[baseline], op, m.metric)
				if len(base) == 0 {
					r.Verdict = VerdictInsufficient
					rows = append(rows, r)
					continue
				}
				bm := Summarize(base).Mean
				delta := r.Mean - bm
				r.BaselineMean, r.Delta = &bm, &delta
				if bm != 0 {
					pct := 100 * delta / bm
					r.DeltaPct = &pct
				}
				verdict, w := Compare(base, vs, m.higher)
				r.Verdict = verdict
				if w != nil {
					t, df, p := w.T, w.DF, w.P
					r.DF, r.PValue = &df, &p
					if !math.IsInf(t, 0) { // no variance on either side: t is undefined, p is 0
						r.T = &t
					}
				}
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// write saves experiment.json, and the comparison and knee files when
// there is something in them.
func (r *Result) write(dir string) error {
	if err := writeJSON(filepath.Join(dir, ResultFile), r); err != nil {
		return err
	}
	if len(r.Comparison) > 0 {
		cmp := struct {
			Baseline   string  `json:"baseline"`
			Confidence float64 `json:"confidence"`
			Rows       []Row   `json:"rows"`
		}{r.Baseline, r.Confidence, r.Comparison}
		if err := writeJSON(filepath.Join(dir, ComparisonJSONFile), cmp); err != nil {
			return err
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, ComparisonCSVFile), comparisonCSV(r.Comparison)); err != nil {
			return err
		}
	}
	if len(r.Knees) > 0 {
		if err := results.WriteFileAtomic(filepath.Join(dir, KneeCSVFile), kneeCSV(r.Knees)); err != nil {
			return err
		}
	}
	return nil
}

// writeJSON writes indented JSON atomically, without HTML escaping (SLOs
// hold < and >).
func writeJSON(path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return results.WriteFileAtomic(path, b.Bytes())
}

func fnum(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', 8, 64)
}

func comparisonCSV(rows []Row) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"combination", "label", "op", "metric", "unit", "n", "mean", "sd", "ci_low", "ci_high", "ci_half_pct",
		"baseline_mean", "delta", "delta_pct", "t", "df", "p_value", "verdict"})
	for _, r := range rows {
		mean, sd := r.Mean, r.SD
		_ = w.Write([]string{r.Combination, r.Label, r.Op, r.Metric, r.Unit, strconv.Itoa(r.N), fnum(&mean), fnum(&sd),
			fnum(r.CILow), fnum(r.CIHigh), fnum(r.CIHalfPct), fnum(r.BaselineMean), fnum(r.Delta), fnum(r.DeltaPct),
			fnum(r.T), fnum(r.DF), fnum(r.PValue), r.Verdict})
	}
	w.Flush()
	return b.Bytes()
}
