package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/termtable"
)

// The requests of every operation together over time: Tsung's mean
// transaction duration, the phases with their error rates beside the
// percentiles, and the break (run.json's transactions).

// txView is the report's section of every request together.
type txView struct {
	Charts []chart
	Tables []figTable
}

// httpSeconds is a web scenario's responses per second, when they count
// from the load's start (scenario_report.http.per_second); nil otherwise.
func httpSeconds(r *results.Run) []httpSecond {
	raw, ok := r.ScenarioReport["http"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var h httpReport
	if json.Unmarshal(b, &h) != nil || h.Since != httpSinceLoad {
		return nil
	}
	return h.PerSecond
}

// phaseOf is the phase a second starting at t (since the load began)
// belongs to; the drain after the last phase counts in the last.
func phaseOf(ps []results.PhaseFigures, t float64) int {
	for i, p := range ps {
		if t+0.5 < p.ToS {
			return i
		}
	}
	return len(ps) - 1
}

// httpByPhase sums the responses per second into each phase by status.
func httpByPhase(ps []results.PhaseFigures, secs []httpSecond) []map[string]int64 {
	if len(secs) == 0 || len(ps) == 0 {
		return nil
	}
	out := make([]map[string]int64, len(ps))
	for i := range out {
		out[i] = map[string]int64{}
	}
	for _, s := range secs {
		m := out[phaseOf(ps, s.T)]
		for c, n := range s.Codes {
			m[c] += n
		}
	}
	return out
}

// failedStatus reports whether a status is a failure of the site: 5xx, or
// no response at all.
func failedStatus(c string) bool {
	n, err := strconv.Atoi(c)
	return err != nil || n >= 500
}

func factor(f *float64) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", *f)
}

// TerminalTransactions prints a phases load's phases (requests, errors,
// mean duration beside the percentiles, HTTP responses by status), the
// break, and from the break on the failed HTTP responses per second, a
// line per phase.
func TerminalTransactions(w io.Writer, r *results.Run) {
	t := r.Transactions
	if t == nil || len(t.Phases) == 0 {
		return
	}
	byPhase := httpByPhase(t.Phases, httpSeconds(r))
	fmt.Fprintln(w, "phases: every operation's requests together (mean and percentiles of successes and failures, as Tsung's mean transaction duration)")
	tab := termtable.Table{Header: []string{"phase", "from-to s", "requests", "req/s", "errors", "error %", "mean ms", "x first", "p50 ms", "p95 ms", "p99 ms"}, Keys: 1, Right: true}
	if byPhase != nil {
		tab.Header = append(tab.Header, "HTTP responses")
	}
	for i, p := range t.Phases {
		row := []string{p.Phase, fmt.Sprintf("%g-%g", p.FromS, p.ToS), strconv.FormatInt(int64(p.Requests), 10), fmt.Sprintf("%.1f", p.PerS),
			strconv.FormatInt(int64(p.Errors), 10), fmt.Sprintf("%.1f", p.ErrorPct), ms(p.MeanMs), factor(p.MeanFactor), ms(p.P50Ms), ms(p.P95Ms), ms(p.P99Ms)}
		if byPhase != nil {
			row = append(row, results.ResponseCounts(byPhase[i]))
		}
		tab.Rows = append(tab.Rows, row)
	}
	_ = tab.Write(w, termtable.Width)
	rule := "?"
	if t.Rule != nil {
		rule = t.Rule.String()
	}
	if t.Break == nil {
		fmt.Fprintf(w, "break: none (no phase had %s)\n", rule)
		return
	}
	fmt.Fprintf(w, "break: phase %d, %s (from %g s): %s\n", t.Break.Index, t.Break.Phase, t.Break.FromS, t.Break.Reason)
	for _, line := range failuresPerSecond(httpSeconds(r), t.Phases, t.Break.Index) {
		fmt.Fprintln(w, line)
	}
}

// failuresPerSecond words, for each failed status, its responses in each
// second from the break on, a line per phase: "HTTP 503 per second in
// phase 3 (60-90 s): 0 2 5 ...".
func failuresPerSecond(secs []httpSecond, ps []results.PhaseFigures, from int) []string {
	codes := map[string]bool{}
	at := map[string]map[int]int64{}
	last := 0
	for _, s := range secs {
		last = max(last, int(s.T))
		for c, n := range s.Codes {
			if failedStatus(c) {
				codes[c] = true
				if at[c] == nil {
					at[c] = map[int]int64{}
				}
				at[c][int(s.T)] += n
			}
		}
	}
	order := slices.Sorted(maps.Keys(codes))
	var out []string
	for _, c := range order {
		for i := from - 1; i < len(ps); i++ {
			lo, hi := int(ps[i].FromS), int(ps[i].ToS)-1
			if i == len(ps)-1 {
				hi = max(hi, last) // the drain counts in the last phase
			}
			counts := make([]string, 0, hi-lo+1)
			for sec := lo; sec <= hi; sec++ {
				counts = append(counts, strconv.FormatInt(at[c][sec], 10))
			}
			out = append(out, fmt.Sprintf("HTTP %s per second in phase %d (%d-%d s): %s", c, i+1, lo, hi+1, strings.Join(counts, " ")))
		}
	}
	return out
}

// chartableSeconds folds each interval too short to chart (tooShort: the
// run's stop cuts the last one to a millisecond or so) into the interval
// before it, whose mean takes in its requests, keeping that interval's
// end; one with none before it is left out.
func chartableSeconds(per []results.TxSecond) []results.TxSecond {
	ts := make([]float64, len(per))
	for i, s := range per {
		ts[i] = s.T
	}
	out := make([]results.TxSecond, 0, len(per))
	for i, j := range foldShort(ts) {
		s := per[i]
		switch {
		case j == i:
			if s.MeanMs != nil {
				m := *s.MeanMs
				s.MeanMs = &m
			}
			out = append(out, s)
		case j >= 0 && len(out) > 0 && out[len(out)-1].Warmup == s.Warmup:
			p := &out[len(out)-1]
			if s.MeanMs != nil && s.N > 0 {
				sum := *s.MeanMs * float64(s.N)
				if p.MeanMs != nil {
					sum += *p.MeanMs * float64(p.N)
				}
				m := sum / float64(p.N+s.N)
				p.MeanMs = &m
			}
			p.N += s.N
			p.Errors += s.Errors
		}
	}
	return out
}

// transactionsFigures draws the mean duration of every request per
// second (the break's phase on shaded) and tabulates the phases.
func transactionsFigures(r *results.Run, xmax float64) ([]figTable, []chart) {
	t := r.Transactions
	if t == nil || len(t.PerSecond) == 0 {
		return nil, nil
	}
	spec := lineSpec{Title: "Mean request duration over time (Tsung's mean transaction duration)", XLabel: "seconds since the load began",
		YLabel: "mean ms", XZero: true, XMax: xmax, XFmt: fmtSeconds, LogY: true, Empty: "no request ended",
		Note: "The mean duration of every request that ended in each second, of every operation, successes and failures together: the study's figure, which had no percentiles."}
	if len(httpSeconds(r)) > 0 {
		spec.Note = strings.Replace(spec.Note, "failures together", "failures together (an HTTP 503 answered at once counts)", 1)
	}
	ser := lineSeries{Name: "mean", Color: color(0)}
	for _, s := range chartableSeconds(t.PerSecond) {
		if s.MeanMs != nil && !s.Warmup {
			ser.X = append(ser.X, s.T)
			ser.Y = append(ser.Y, *s.MeanMs)
		}
	}
	spec.Series = append(spec.Series, ser)
	if t.Break != nil && len(t.Phases) > 0 {
		spec.Bands = append(spec.Bands, band{X0: t.Break.FromS, X1: t.Phases[len(t.Phases)-1].ToS, Label: "broken from phase " + strconv.Itoa(t.Break.Index)})
	}
	charts := []chart{spec.render()}
	if len(t.Phases) == 0 {
		return nil, charts
	}
	byPhase := httpByPhase(t.Phases, httpSeconds(r))
	note := "Every operation's requests that ended in each phase (the drain after the last phase counts in it); mean and percentiles of successes and failures together; x first: the mean over the first phase's. "
	if t.Rule != nil {
		note += "A phase breaks with " + t.Rule.String() + "; "
	}
	if t.Break != nil {
		note += fmt.Sprintf("the first that did is phase %d, %s: %s.", t.Break.Index, t.Break.Phase, t.Break.Reason)
	} else {
		note += "none did."
	}
	tab := figTable{Title: "Phases: requests, errors and duration", Note: note,
		Cols: []string{"phase", "from-to s", "requests", "req/s", "errors", "error %", "mean ms", "x first", "p50", "p95", "p99", "max", "broken"}}
	if byPhase != nil {
		tab.Cols = append(tab.Cols, "HTTP responses")
	}
	for i, p := range t.Phases {
		broken := ""
		if t.Break != nil && i+1 >= t.Break.Index {
			broken = "yes"
		}
		row := []string{p.Phase, fmt.Sprintf("%g-%g", p.FromS, p.ToS), strconv.FormatInt(p.Requests, 10), fmt.Sprintf("%.1f", p.PerS),
			strconv.FormatInt(p.Errors, 10), fmt.Sprintf("%.1f", p.ErrorPct), ms(p.MeanMs), factor(p.MeanFactor), ms(p.P50Ms), ms(p.P95Ms), ms(p.P99Ms), ms(p.MaxMs), broken}
		if byPhase != nil {
			row = append(row, results.ResponseCounts(byPhase[i]))
		}
		tab.Rows = append(tab.Rows, row)
	}
	return []figTable{tab}, charts
}
