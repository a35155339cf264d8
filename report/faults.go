package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// timeMark is a vertical marker on the time charts: a fault or the
// cluster's return to health.
type timeMark struct {
	T     float64
	Label string
}

// timeFrame is what a rendered time chart keeps of its layout so that
// markers can be drawn on it afterwards.
type timeFrame struct {
	xa       axis
	top, bot float64
}

// faultMarks lists the markers of a run: each fault's injection (and a
// stop's or a network fault's end, a restarted node's start), and the time the cluster was
// healthy again.
func faultMarks(r *results.Run) []timeMark {
	var m []timeMark
	for _, f := range r.Faults {
		if f.InjectedS != nil {
			m = append(m, timeMark{*f.InjectedS, f.Kind + " " + f.Node})
		}
		if f.EndedS != nil {
			what := "end " + f.Kind + " " + f.Node // a network fault's end
			switch f.Kind {
			case "stop":
				what = "cont " + f.Node
			case "restart":
				what = f.Node + " started"
			case "partition":
				what = "healed " + f.Node
			}
			m = append(m, timeMark{*f.EndedS, what})
		}
	}
	if rc := r.Recovery; rc != nil && rc.HealthyS != nil {
		m = append(m, timeMark{*rc.HealthyS, "healthy"})
	}
	sort.SliceStable(m, func(i, j int) bool { return m[i].T < m[j].T })
	return m
}

// markChart draws the markers that fall inside a time chart's x range as
// dotted purple vertical lines with their labels (staggered so that close ones
// stay readable).
func markChart(c *chart, marks []timeMark) {
	if c == nil || c.frame == nil {
		return
	}
	f := c.frame
	row := 0
	for _, m := range marks {
		if m.T < f.xa.lo || m.T > f.xa.hi {
			continue
		}
		x := f.xa.px(m.T)
		c.Lines = append(c.Lines, svgLine{X1: x, Y1: f.top, X2: x, Y2: f.bot, Class: "mark"})
		anchor, tx := "start", x+3
		if x > (f.xa.p0+f.xa.p1)/2 {
			anchor, tx = "end", x-3
		}
		c.Texts = append(c.Texts, svgText{X: tx, Y: f.top + 24 + 12*float64(row%3), Anchor: anchor, Class: "marklbl", S: m.Label})
		row++
	}
}

// markRunCharts puts the run's fault markers on every time chart.
func markRunCharts(v *runView, r *results.Run) {
	marks := faultMarks(r)
	if len(marks) == 0 {
		return
	}
	for i := range v.Latency {
		markChart(&v.Latency[i], marks)
	}
	markChart(&v.Throughput, marks)
	markChart(v.Errors, marks)
	markChart(v.Concurrency, marks)
	for i := range v.TeleCharts {
		markChart(&v.TeleCharts[i], marks)
	}
}

// windowText is "120 ok, 14 errors (refused 12, timeout 2)".
func windowText(w *results.ErrorWindow) string {
	if w == nil {
		return "-"
	}
	s := fmt.Sprintf("%d ok, %d errors", w.OK, w.Errors)
	if len(w.ByClass) > 0 {
		s += " (" + classes(w.ByClass) + ")"
	}
	return s
}

func secs(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f s", *p)
}

// faultTable lists the faults with the operations around each.
func faultTable(r *results.Run) *figTable {
	if len(r.Faults) == 0 {
		return nil
	}
	t := &figTable{Title: "Faults", Wrap: true,
		Cols: []string{"fault", "injected", "ended", "outcome", fmt.Sprintf("%.0f s before", results.ErrorWindowS), fmt.Sprintf("%.0f s after", results.ErrorWindowS)},
		Note: "Times count from the start of the load (t = 0 of the charts, warm-up included). Before and after count every operation of the 1 s intervals around the injection (the interval in which it happened counts after), errors by class."}
	for _, f := range r.Faults {
		out := f.Outcome
		if f.Error != "" {
			out += ": " + f.Error
		}
		t.Rows = append(t.Rows, []string{f.Spec, secs(f.InjectedS), secs(f.EndedS), out, windowText(f.Before), windowText(f.After)})
	}
	return t
}

// recoveryText says how long the cluster took to be healthy again.
func recoveryText(rc *results.Recovery) string {
	if rc == nil {
		return ""
	}
	var s string
	switch {
	case rc.TimeToHealthyS != nil:
		s = fmt.Sprintf("The cluster was healthy (green) %.1f s after the last fault (t = %.1f s).", *rc.TimeToHealthyS, *rc.HealthyS)
		if rc.CheckS != nil && *rc.CheckS >= 0.5 {
			s += fmt.Sprintf(" The health check that saw it took %.1f s: it may have been healthy up to that much sooner.", *rc.CheckS)
		}
	case rc.LastFaultS != nil:
		s = fmt.Sprintf("The cluster was not healthy again after the last fault (t = %.1f s).", *rc.LastFaultS)
	default:
		s = "No fault was injected (the run ended first)."
	}
	s += fmt.Sprintf(" After the load the run waited %.1f s for it", rc.WaitedS)
	if rc.TimedOut {
		s += " and gave up"
	}
	return s + "; last health: " + rc.Health + "."
}

// eventTable lists node events and health changes.
func eventTable(r *results.Run) *figTable {
	if len(r.Events) == 0 {
		return nil
	}
	t := &figTable{Title: "Cluster events", Cols: []string{"t", "event", "node", "detail"}, Wrap: true,
		Note: recoveryText(r.Recovery)}
	for _, e := range r.Events {
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%.1f s", e.TS), strings.ReplaceAll(e.Kind, "_", " "), e.Node, e.Detail})
	}
	return t
}

// maxTerminalEvents bounds the events the terminal summary prints.
const maxTerminalEvents = 30

// TerminalFaults prints a run's faults, cluster events and recovery under
// the terminal summary; nothing for a run without faults.
func TerminalFaults(w io.Writer, r *results.Run) {
	if len(r.Faults) == 0 && r.Recovery == nil {
		return
	}
	for _, f := range r.Faults {
		line := fmt.Sprintf("fault %s: %s", f.Spec, f.Outcome)
		if f.InjectedS != nil {
			line += fmt.Sprintf(" at %.1f s", *f.InjectedS)
		}
		if f.Error != "" {
			line += ": " + f.Error
		}
		fmt.Fprintln(w, line)
		if f.Before != nil {
			fmt.Fprintf(w, "  %.0f s before: %s; %.0f s after: %s\n", results.ErrorWindowS, windowText(f.Before), results.ErrorWindowS, windowText(f.After))
		}
	}
	for i, e := range r.Events {
		if i == maxTerminalEvents {
			fmt.Fprintf(w, "  ... %d more events in run.json\n", len(r.Events)-i)
			break
		}
		node := ""
		if e.Node != "" {
			node = " " + e.Node
		}
		fmt.Fprintf(w, "  %7.1f s  %s%s: %s\n", e.TS, strings.ReplaceAll(e.Kind, "_", " "), node, e.Detail)
	}
	if s := recoveryText(r.Recovery); s != "" {
		fmt.Fprintln(w, s)
	}
}

// rebuildFaults fills a dead run's faults and events from faults.log,
// streamed as they happened (a torn last line is ignored).
func rebuildFaults(dir string, r *results.Run) {
	b, err := os.ReadFile(filepath.Join(dir, results.FaultsLogFile))
	if err != nil || len(r.Faults) > 0 {
		return
	}
	var faults []results.Fault
	var events []results.Event
	for _, line := range strings.Split(string(b), "\n") {
		var l results.FaultLogLine
		if line == "" || json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		switch {
		case l.Event != nil:
			events = append(events, *l.Event)
		case l.Fault != nil && l.Index >= 0 && l.Index < 1000:
			for len(faults) <= l.Index {
				faults = append(faults, results.Fault{})
			}
			faults[l.Index] = *l.Fault
		}
	}
	r.Faults, r.Events = faults, events
	if len(faults) > 0 {
		r.Warnings = append(r.Warnings, "faults and events come from faults.log, streamed as they happened; the errors around each fault and the recovery time were not measured (the process died)")
	}
}
