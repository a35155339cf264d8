package experiment

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/slo"
	"github.com/scalelab/scalelab/termtable"
)

// WriteTable prints an experiment's outcome for a terminal: for a matrix, a
// block per operation with a row per combination (mean ± 95 % CI half-width
// over repeats, the change against the baseline with its verdict and
// Welch's p-value); for a knee search, the curve and the knee; then the SLO
// verdicts and failures.
func WriteTable(w io.Writer, r *Result) {
	if r.Kind == results.KindKnee {
		writeKnees(w, r)
	} else {
		writeComparison(w, r)
	}
	writeSLO(w, r)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	for _, f := range r.Failures {
		fmt.Fprintln(w, "FAILED:", f)
	}
}

func writeComparison(w io.Writer, r *Result) {
	if len(r.Comparison) == 0 {
		fmt.Fprintln(w, "no run was measured")
		return
	}
	// rows[op][combination][metric]
	type key struct{ op, combo, metric string }
	byKey := map[key]Row{}
	var ops, tierCPU []string
	seenOp, seenCPU := map[string]bool{}, map[string]bool{}
	for _, row := range r.Comparison {
		byKey[key{row.Op, row.Combination, row.Metric}] = row
		if strings.HasPrefix(row.Metric, slo.CPUPerOpPrefix) && !seenCPU[row.Metric] {
			seenCPU[row.Metric] = true
			tierCPU = append(tierCPU, row.Metric)
		}
		if !seenOp[row.Op] {
			seenOp[row.Op] = true
			ops = append(ops, row.Op)
		}
	}
	rule := r.BaselineRule
	if rule == "" {
		rule = r.Baseline
	}
	fmt.Fprintf(w, "mean over repeats ± 95%% CI half-width; change vs baseline (%s) with Welch's t-test at 5%%\n", rule)
	for _, op := range ops {
		metrics := []string{slo.Throughput, slo.P50, slo.P95, slo.P99}
		title := op
		if op == slo.AllOps {
			metrics = append([]string{slo.Throughput, slo.ErrorRate}, tierCPU...)
			title = "all operations (CPU per operation of each tier from its telemetry)"
		}
		fmt.Fprintf(w, "\n%s\n", title)
		tab := termtable.Table{Header: []string{"combination", "n"}, Keys: 2, Group: 2, Indent: "  "}
		for _, m := range metrics {
			tab.Header = append(tab.Header, metricHead(m), "vs baseline")
		}
		for _, c := range r.Combinations {
			cells := []string{c.ID + " " + c.Label, ""}
			any := false
			for _, m := range metrics {
				row, ok := byKey[key{op, c.ID, m}]
				if !ok {
					cells = append(cells, "-", "")
					continue
				}
				any = true
				if n, _ := strconv.Atoi(cells[1]); row.N > n {
					cells[1] = strconv.Itoa(row.N) // repeats measured; a percentile may be undefined in some
				}
				cells = append(cells, meanCI(row), deltaCell(row))
			}
			if any {
				tab.Rows = append(tab.Rows, cells)
			}
		}
		_ = tab.Write(w, termtable.Width)
	}
}

func metricHead(m string) string {
	switch m {
	case slo.Throughput:
		return "ops/s"
	case slo.ErrorRate:
		return "errors"
	}
	if t, ok := strings.CutPrefix(m, slo.CPUPerOpPrefix); ok {
		return t + " µs/op"
	}
	return m + " ms"
}

// num formats a figure with about four significant digits.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func meanCI(row Row) string {
	scale, unit := 1.0, ""
	if row.Metric == slo.ErrorRate {
		scale, unit = 100, "%"
	}
	s := num(row.Mean*scale) + unit
	if row.CIHigh != nil {
		s += " ±" + num((*row.CIHigh-row.Mean)*scale)
	}
	return s
}

func deltaCell(row Row) string {
	switch {
	case row.Baseline:
		return "baseline"
	case row.Verdict == stats.VerdictInsufficient:
		return "n/a (<2 repeats)"
	}
	d := ""
	switch {
	case row.DeltaPct != nil && math.Abs(*row.DeltaPct) >= 1000 && row.BaselineMean != nil:
		d = fmt.Sprintf("x%s", num(row.Mean / *row.BaselineMean))
	case row.DeltaPct != nil:
		d = fmt.Sprintf("%+.1f%%", *row.DeltaPct)
	case row.Delta != nil && row.Metric == slo.ErrorRate:
		d = signed(100**row.Delta) + " pp"
	case row.Delta != nil:
		d = signed(*row.Delta)
	}
	v := row.Verdict
	if v == stats.VerdictNoDifference {
		v = "~"
	}
	if row.PValue != nil {
		return fmt.Sprintf("%s %s p%s", d, v, pval(*row.PValue))
	}
	return d + " " + v
}

func signed(v float64) string {
	if v >= 0 {
		return "+" + num(v)
	}
	return num(v)
}

func pval(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return "=" + strconv.FormatFloat(p, 'f', 3, 64)
}

func writeSLO(w io.Writer, r *Result) {
	if len(r.SLO) == 0 || r.Kind == results.KindKnee {
		return
	}
	fmt.Fprintf(w, "\nSLO %s (on the mean over repeats)\n", strings.Join(r.SLO, ", "))
	tab := termtable.Table{Header: []string{"combination", "slo", "missed"}, Keys: 1, Indent: "  "}
	for _, c := range r.Combinations {
		if c.SLOPass == nil {
			continue
		}
		verdict := "pass"
		var why []string
		for _, o := range c.SLO {
			if !o.Pass {
				why = append(why, o.Detail)
			}
		}
		if !*c.SLOPass {
			verdict = "FAIL"
		}
		tab.Rows = append(tab.Rows, []string{c.ID + " " + c.Label, verdict, strings.Join(why, "; ")})
	}
	_ = tab.Write(w, termtable.Width)
}

func writeKnees(w io.Writer, r *Result) {
	for _, k := range r.Knees {
		fmt.Fprintf(w, "\nknee search on %s: %s %s, SLO %s\n", k.On, k.Combination, k.Label, strings.Join(r.SLO, ", "))
		cols := kneeColumns(k.Steps)
		head := []string{k.On, "runs", "ops/s"}
		for _, f := range cols {
			head = append(head, figName(f))
		}
		tab := termtable.Table{Header: append(head, "SLO"), Keys: 1, Indent: "  "}
		for _, st := range k.Steps {
			tab.Rows = append(tab.Rows, kneeRow(st, cols))
		}
		_ = tab.Write(w, termtable.Width)
		fmt.Fprintf(w, "knee: %s", k.Summary)
		if k.Throughput != nil && k.Throughput.N > 0 {
			fmt.Fprintf(w, "; at %g: %s ops/s", *k.Load, statCell(*k.Throughput, 1))
			for _, f := range k.Figures {
				fmt.Fprintf(w, ", %s %s", figName(f), statCell(f.Stat, 1))
			}
		}
		fmt.Fprintln(w)
	}
}

// kneeColumns is every figure some step has, in the order the steps
// first give them: steps may differ (an operation that ran only at
// higher loads).
func kneeColumns(steps []KneeStep) []StepFigure {
	var cols []StepFigure
	seen := map[string]bool{}
	for _, st := range steps {
		for _, f := range st.Figures {
			if key := f.Op + " " + f.Metric; !seen[key] {
				seen[key] = true
				cols = append(cols, StepFigure{Op: f.Op, Metric: f.Metric})
			}
		}
	}
	return cols
}

// kneeRow is a step's cells under the columns: "-" for a figure the step
// lacks or could not define.
func kneeRow(st KneeStep, cols []StepFigure) []string {
	cells := []string{strconv.FormatFloat(st.Load, 'f', -1, 64), strconv.Itoa(len(st.Runs)), statCell(st.Throughput, 1)}
	for _, c := range cols {
		cell := "-"
		for _, f := range st.Figures {
			if f.Op == c.Op && f.Metric == c.Metric {
				scale := 1.0
				if f.Metric == slo.ErrorRate {
					scale = 100
				}
				cell = statCell(f.Stat, scale)
			}
		}
		cells = append(cells, cell)
	}
	verdict := "pass"
	switch {
	case st.TooFewSamples:
		verdict = "not enough samples"
	case !st.Pass:
		verdict = "FAIL"
	}
	return append(cells, verdict)
}

func figName(f StepFigure) string {
	name := f.Metric
	if slo.IsLatency(f.Metric) {
		name += " ms"
	}
	if f.Op != "" && f.Op != slo.AllOps {
		name += " " + f.Op
	}
	return name
}

func statCell(s Stat, scale float64) string {
	if s.N == 0 {
		return "-"
	}
	out := num(s.Mean * scale)
	if s.CIHigh != nil {
		out += " ±" + num((*s.CIHigh-s.Mean)*scale)
	}
	return out
}
