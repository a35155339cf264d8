package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/slo"
)

// The experiment.json schema lives in package results; these names are
// the experiment package's own for it.
type (
	Result            = results.Experiment
	ResultTotals      = results.ExperimentTotals
	RepeatRule        = results.RepeatRule
	FactorInfo        = results.FactorInfo
	CombinationResult = results.CombinationResult
	ClusterInfo       = results.ClusterInfo
	RunRef            = results.RunRef
	ClusterUse        = results.ClusterUse
	Row               = results.Row
	Stat              = results.Stat // one metric over repeats (package stats computes it)
)

// ReadResult loads experiment.json from an experiment's directory.
func ReadResult(dir string) (*Result, error) { return results.ReadExperiment(dir) }

// compared are the metrics of the comparison, in table order.
var compared = []comparedMetric{
	{slo.Throughput, "ops/s", true, true},
	{slo.Mean, "ms", false, false},
	{slo.P50, "ms", false, false},
	{slo.P90, "ms", false, false},
	{slo.P95, "ms", false, false},
	{slo.P99, "ms", false, false},
	{slo.ErrorRate, "fraction", false, true},
}

// comparedMetric is a figure the comparison reports.
type comparedMetric struct {
	metric, unit string
	higher, all  bool // higher is better; also for the totals
}

// tierMetrics are the CPU-per-operation figures of every tier any run's
// telemetry measured, compared on the totals (lower is better).
func tierMetrics(tables [][]slo.Table) []comparedMetric {
	seen := map[string]bool{}
	for _, ts := range tables {
		for _, t := range ts {
			for k := range t[slo.AllOps] {
				if strings.HasPrefix(k, slo.CPUPerOpPrefix) {
					seen[k] = true
				}
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]comparedMetric, len(keys))
	for i, k := range keys {
		out[i].metric, out[i].unit, out[i].all = k, "µs/op", true
	}
	return out
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
		ms := []string{slo.Throughput, slo.ErrorRate, slo.ErrorCount, slo.Mean, slo.P50, slo.P90, slo.P95, slo.P99, slo.P999, slo.Max}
		for _, tm := range tierMetrics([][]slo.Table{tables}) {
			ms = append(ms, tm.metric)
		}
		for _, m := range ms {
			if vs := values(tables, op, m); len(vs) > 0 {
				s := stats.Summarize(vs)
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
			for _, m := range append(compared, tierMetrics(tables)...) {
				if op == slo.AllOps && !m.all {
					continue
				}
				vs := values(tables[ci], op, m.metric)
				if len(vs) == 0 {
					continue
				}
				r := Row{Combination: c.ID, Label: c.Label, Op: op, Metric: m.metric, Unit: m.unit, HigherIsBetter: m.higher,
					Values: vs, Stat: stats.Summarize(vs), Baseline: ci == baseline, ComparedTo: combos[baseline].ID}
				if ci == baseline {
					r.Verdict = stats.VerdictBaseline
					rows = append(rows, r)
					continue
				}
				base := values(tables[baseline], op, m.metric)
				if len(base) == 0 {
					r.Verdict = stats.VerdictInsufficient
					rows = append(rows, r)
					continue
				}
				bm := stats.Summarize(base).Mean
				delta := r.Mean - bm
				r.BaselineMean, r.Delta = &bm, &delta
				if bm != 0 {
					pct := 100 * delta / bm
					r.DeltaPct = &pct
				}
				verdict, w := stats.Compare(base, vs, m.higher)
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
func writeResult(r *Result, dir string) error {
	if err := writeJSON(filepath.Join(dir, results.ExperimentFile), r); err != nil {
		return err
	}
	if len(r.Comparison) > 0 {
		cmp := struct {
			Baseline   string  `json:"baseline"`
			Confidence float64 `json:"confidence"`
			Rows       []Row   `json:"rows"`
		}{r.Baseline, r.Confidence, r.Comparison}
		if err := writeJSON(filepath.Join(dir, results.ComparisonJSONFile), cmp); err != nil {
			return err
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, results.ComparisonCSVFile), comparisonCSV(r.Comparison)); err != nil {
			return err
		}
	}
	if len(r.Knees) > 0 {
		if err := results.WriteFileAtomic(filepath.Join(dir, results.KneeCSVFile), kneeCSV(r.Knees)); err != nil {
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
