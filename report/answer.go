package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/termtable"
)

// A comparison leads with its answer: per operation and for all of them
// together, each run's throughput and p99 and each contender's change
// against the baseline with its verdict (delta's classes: better, worse,
// or the same within 1 %). The rest of the comparison (what differs, every
// figure, the charts) follows it.

// totalOp names the row of all operations together.
const totalOp = "total"

// answerRow is one figure of one operation (or of the total) in the
// answer: the baseline's value and each contender's with its change.
type answerRow struct {
	Op, Metric string
	Total      bool
	Base       string
	Cells      []cmpCell
}

// runFigures is what the answer compares of one run: throughput and p99
// per operation and for the total.
type runFigures struct {
	Tput map[string]float64
	P99  map[string]*float64
}

// figuresOf reads a run's throughput and p99 per operation from its
// summary, and its total: the throughput of every operation summed (the
// run's totals where run.json has them) and the p99 of the operations'
// histograms merged over the measured window (none without
// intervals.hlog). Composite operations are left out of the total, as
// run.json's totals leave them out.
func figuresOf(c *compared) runFigures {
	f := runFigures{Tput: map[string]float64{}, P99: map[string]*float64{}}
	var sum float64
	var merged *hdr.Histogram
	for op, s := range c.Run.Summary {
		f.Tput[op], f.P99[op] = s.ThroughputPerS, s.P99Ms
		if s.Composite != "" {
			continue
		}
		sum += s.ThroughputPerS
		if c.Log == nil || c.Log.Hists[op] == nil {
			continue
		}
		if merged == nil {
			merged = metrics.NewHist()
		}
		merged.Merge(c.Log.Hists[op])
	}
	if t := c.Run.Totals; t != nil {
		sum = t.ThroughputPerS
	}
	f.Tput[totalOp] = sum
	f.P99[totalOp] = metrics.PercentileMs(merged, 99)
	return f
}

// answerOps are the operations of the answer, sorted, then the total.
func answerOps(runs []*compared) []string {
	set := map[string]bool{}
	for _, c := range runs {
		for op := range c.Run.Summary {
			set[op] = true
		}
	}
	return append(slices.Sorted(maps.Keys(set)), totalOp)
}

// answerRows are the answer's rows: for each operation and then the
// total, its throughput and its p99.
func answerRows(runs []*compared) []answerRow {
	figs := make([]runFigures, len(runs))
	for i, c := range runs {
		figs[i] = figuresOf(c)
	}
	var rows []answerRow
	for _, op := range answerOps(runs) {
		tput := answerRow{Op: op, Metric: "ops/s", Total: op == totalOp, Base: "-"}
		p99 := answerRow{Op: op, Metric: "p99 ms", Total: op == totalOp, Base: "-"}
		bt, bok := figs[0].Tput[op]
		bp := figs[0].P99[op]
		if bok {
			tput.Base = fmtNum(bt)
		}
		if bp != nil {
			p99.Base = ms(bp)
		}
		for _, f := range figs[1:] {
			tc, pc := cmpCell{V: "-", Class: "same"}, cmpCell{V: "-", Class: "same"}
			if v, ok := f.Tput[op]; ok {
				tc.V = fmtNum(v)
				if bok {
					tc.Delta, tc.Class = delta(bt, v, true)
				}
			}
			if v := f.P99[op]; v != nil {
				pc.V = ms(v)
				if bp != nil {
					pc.Delta, pc.Class = delta(*bp, *v, false)
				}
			}
			tput.Cells, p99.Cells = append(tput.Cells, tc), append(p99.Cells, pc)
		}
		rows = append(rows, tput, p99)
	}
	return rows
}

// verdictText words a change's class: "better", "worse", "same" (within
// 1 %), or "-" where there is nothing to compare.
func verdictText(c cmpCell) string {
	if c.Delta == "" {
		return "-"
	}
	return c.Class
}

// totalVerdicts says, for each contender, how the total compares: "all
// operations: throughput -62.5% (worse), p99 +168.0% (worse)".
func totalVerdicts(rows []answerRow) []string {
	var tput, p99 *answerRow
	for i := range rows {
		if rows[i].Total && rows[i].Metric == "ops/s" {
			tput = &rows[i]
		} else if rows[i].Total {
			p99 = &rows[i]
		}
	}
	if tput == nil || p99 == nil {
		return nil
	}
	out := make([]string, len(tput.Cells))
	for i := range tput.Cells {
		out[i] = fmt.Sprintf("all operations: throughput %s, p99 %s", changeText(tput.Cells[i]), changeText(p99.Cells[i]))
	}
	return out
}

func changeText(c cmpCell) string {
	if c.Delta == "" {
		return "not comparable"
	}
	return c.Delta + " (" + verdictText(c) + ")"
}

// writeAnswer prints the answer: a line per contender with its total's
// verdict, then the table of throughput and p99 per operation and in
// total.
func writeAnswer(w io.Writer, runs []*compared) error {
	rows := answerRows(runs)
	for i, v := range totalVerdicts(rows) {
		fmt.Fprintf(w, "contender %d against the baseline, %s\n", i+1, v)
	}
	fmt.Fprintln(w, "throughput higher is better, p99 lower is better, same: within 1 %; total: every operation together")
	tab := termtable.Table{Header: []string{"op", "metric", "baseline"}, Keys: 3, Group: 3, Right: true}
	for i := range runs[1:] {
		tab.Header = append(tab.Header, fmt.Sprintf("contender %d", i+1), "change", "verdict")
	}
	for _, r := range rows {
		row := []string{r.Op, r.Metric, r.Base}
		for _, c := range r.Cells {
			row = append(row, c.V, c.Delta, verdictText(c))
		}
		tab.Rows = append(tab.Rows, row)
	}
	return tab.Write(w, termtable.Width)
}

// runState is a run's status and how long it was measured, for the lines
// that name the runs: "ok, measured 3 s", "interrupted (exit code 130;
// stopped: interrupted), measured 4 s of the 20 s configured".
func runState(r *results.Run) string {
	s := statusFact(r.Status, r.ExitCode)
	if r.StopReason != "" && r.StopReason != r.Status && r.Status != results.StatusOK {
		s += ", stopped: " + r.StopReason
	}
	m := measuredS(r)
	s += ", measured " + fmtDuration(m)
	if d := r.Load.DurationS; d > 0 && m < 0.95*d {
		s += " of the " + fmtDuration(d) + " configured"
	}
	return s
}

// measuredS is how long a run was measured: run.json's measured window,
// else (a run that stopped before writing it) the time from the load's
// start to the end less the warm-up.
func measuredS(r *results.Run) float64 {
	if r.MeasuredS > 0 || r.End == nil {
		return r.MeasuredS
	}
	start := r.Start
	if r.LoadStart != nil {
		start = *r.LoadStart
	}
	return max(0, r.End.Sub(start).Seconds()-r.Load.WarmupS)
}

// shortVersion is the first part of a server's version banner: "PostgreSQL
// 15.18" of "PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu,
// compiled by gcc ...".
func shortVersion(v string) string {
	for _, sep := range []string{" (", " on ", ", "} {
		if i := strings.Index(v, sep); i > 0 {
			v = v[:i]
		}
	}
	return strings.TrimSpace(v)
}

// fullVersions lists the server banners a comparison shortened, a row per
// run ("label", "banner"); nil when none was.
func fullVersions(runs []*compared) [][]string {
	var out [][]string
	shortened := false
	for _, c := range runs {
		v := ""
		if c.Run.Server != nil {
			v = c.Run.Server.Version
		}
		shortened = shortened || shortVersion(v) != v
		out = append(out, []string{c.Label, v})
	}
	if !shortened {
		return nil
	}
	return out
}
