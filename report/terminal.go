// Package report renders results: the terminal summary table and the
// self-contained HTML page of a run.
package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/termtable"
)

// Terminal prints a run's summary: one row per operation, then warnings
// and failed checks.
func Terminal(w io.Writer, r *results.Run) {
	if r.Server != nil && r.Server.Product != "" {
		fmt.Fprintf(w, "measured on %s (%s engine)\n", r.Server.Product, r.Engine)
	}
	open := r.Lag != nil
	tab := termtable.Table{Header: []string{"op", "count", "errors", "ops/s", "mean ms", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "max ms"}, Right: true}
	if open {
		tab.Header = append(tab.Header, "svc p99 ms", "late")
	}
	for _, op := range slices.Sorted(maps.Keys(r.Summary)) {
		s := r.Summary[op]
		row := []string{s.Op, fmt.Sprint(s.Count), fmt.Sprint(s.Errors), fmt.Sprintf("%.1f", s.ThroughputPerS),
			ms(s.MeanMs), ms(s.P50Ms), ms(s.P95Ms), ms(s.P99Ms), ms(s.P999Ms), ms(s.MaxMs)}
		if open {
			var svc *float64
			if s.Service != nil {
				svc = s.ServiceP99Ms
			}
			row = append(row, ms(svc), fmt.Sprint(s.Late))
		}
		tab.Rows = append(tab.Rows, row)
	}
	if t := r.Totals; t != nil {
		tab.Rows = append(tab.Rows, []string{"total", fmt.Sprint(t.Count), fmt.Sprint(t.Errors), fmt.Sprintf("%.1f", t.ThroughputPerS)})
	}
	_ = tab.Write(w, termtable.Width)
	for _, op := range slices.Sorted(maps.Keys(r.Summary)) {
		if c := r.Summary[op].Composite; c != "" {
			fmt.Fprintf(w, "%s: %s (not in the total)\n", op, c)
		}
	}
	for _, op := range slices.Sorted(maps.Keys(r.Summary)) {
		s := r.Summary[op]
		if len(s.ErrorsByClass) > 0 {
			fmt.Fprintf(w, "errors of %s: %s\n", op, classes(s.ErrorsByClass))
		}
		if s.InFlight > 0 {
			fmt.Fprintf(w, "%s: %d still in flight at the stop\n", op, s.InFlight)
		}
	}
	fmt.Fprintf(w, "measured %.1fs (warm-up %.1fs excluded), status %s\n", r.MeasuredS, r.Load.WarmupS, r.Status)
	if r.Lag != nil && r.Lag.P99Ms != nil {
		fmt.Fprintf(w, "schedule lag p99 %.3f ms\n", *r.Lag.P99Ms)
	}
	if r.MaxSessions > 0 && r.Concurrency == nil {
		fmt.Fprintf(w, "max concurrent sessions %d\n", r.MaxSessions)
	}
	if c := r.Concurrency; c != nil {
		line := inFlightText(c)
		if r.MaxSessions > 0 {
			line += fmt.Sprintf("; at most %d users active at once", r.MaxSessions)
		}
		fmt.Fprintf(w, "in flight: %s\n", line)
	}
	if q := r.ClientQueue; q != nil {
		fmt.Fprintf(w, "client queue: %s\n", q.Text())
	}
	if c, _ := parseCache(r.ScenarioReport); c != nil {
		fmt.Fprintln(w, c.summary())
	}
	terminalCPU(w, r)
	for _, warn := range r.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	sloFailed := false
	for _, f := range r.Failures {
		fmt.Fprintln(w, "FAILED:", f)
		sloFailed = sloFailed || strings.HasPrefix(f, "SLO ")
	}
	switch {
	case len(r.SLO) == 0 || sloFailed:
	case r.Status == results.StatusOK || r.Status == results.StatusFailed:
		fmt.Fprintf(w, "slo: met: %s\n", strings.Join(r.SLO, ", "))
	default:
		fmt.Fprintf(w, "slo: not checked: the run is %s\n", r.Status)
	}
}

// terminalCPU prints the CPU line and the saturation verdict of the run's
// telemetry; a merged divided test, whose segments' telemetry is not
// merged, has scalelab's own CPU summed over its segments.
func terminalCPU(w io.Writer, r *results.Run) {
	t := r.Telemetry
	if t == nil {
		if p := r.Process; p != nil && r.Merged != nil && p.WallS > 0 {
			fmt.Fprintf(w, "cpu: generator %.2f cores summed over %d segments (%.0f µs/op); telemetry per segment, not merged\n",
				(p.CPUUserS+p.CPUSysS)/p.WallS, len(r.Merged.Shards), p.CPUPerOpUs)
		}
		return
	}
	var parts []string
	for _, x := range t.Tiers {
		parts = append(parts, fmt.Sprintf("%s %.2f cores (%.0f µs/op)", x.Tier, x.CPUMeanCores, x.CPUPerOpUs))
	}
	for _, x := range t.NoSamples {
		parts = append(parts, x+" no samples")
	}
	fmt.Fprintf(w, "cpu: %s; host %.2f of %d cores\n", strings.Join(parts, ", "), t.HostCPUMean, t.HostCPUs)
	fmt.Fprintf(w, "saturation: %s\n", t.Saturation)
	for _, ph := range t.Phases {
		fmt.Fprintf(w, "  phase %s (%g-%g s): %s\n", ph.Window, ph.FromS, ph.ToS, ph.Saturation)
	}
}

func classes(m map[string]int64) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// ms formats a latency, or "-" where the sample count cannot support it.
func ms(v *float64) string {
	if v == nil {
		return "-"
	}
	switch {
	case *v >= 100:
		return fmt.Sprintf("%.0f", *v)
	case *v >= 1:
		return fmt.Sprintf("%.2f", *v)
	}
	return fmt.Sprintf("%.3f", *v)
}
