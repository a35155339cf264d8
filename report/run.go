package report

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// runView is everything the run page shows.
type runView struct {
	Meta        pageMeta
	Run         *results.Run
	Heading     string
	Facts       []fact
	Changed     []fact
	KPIs        []fact
	Headline    figTable
	Summary     figTable
	ErrClasses  *figTable
	ErrSamples  *figTable
	Faults      *figTable // faults.go
	Events      *figTable
	Audit       *figTable // audit.go
	Latency     []chart
	Cache       *cacheView // cache.go
	Throughput  chart
	Errors      *chart
	Spectrum    chart
	Concurrency *chart
	Tx          *txView // transactions.go
	Lag         *chart  // open models: schedule lag over time
	Scenario    []figTable
	ScenCharts  []chart
	Saturation  string     // telemetry.go
	TeleCharts  []chart    // CPU and memory per node over time
	TeleTables  []figTable // per node, per tier, engine stats
	Settings    []fact
	Notes       []string
}

// WriteHTML writes the run's report page to path: one self-contained file
// built from the run.json document r and the streamed files in dir
// (series.csv for the charts over time, intervals.hlog for the percentile
// spectra; raw samples are never read). A missing or damaged streamed file
// leaves its charts out with a note rather than failing the page.
func WriteHTML(path string, r *results.Run, dir string) error {
	v := buildRunView(r, dir)
	b, err := render(runTmpl, "run", v)
	if err != nil {
		return err
	}
	return results.WriteFileAtomic(path, b)
}

// buildRunView gathers what the run page shows of r, reading its streamed
// files (series, histograms, telemetry) from dir.
func buildRunView(r *results.Run, dir string) *runView {
	on := r.Engine
	if r.Server != nil && r.Server.Product != "" {
		on = r.Server.Product + " (" + r.Engine + " engine)"
	}
	v := &runView{Run: r, Heading: fmt.Sprintf("%s on %s", r.Scenario, on)}
	v.Meta = newMeta("scalelab: " + v.Heading + " (" + r.Status + ")")
	open := isOpenRun(r)
	ser, hl := v.readStreams(r, dir)
	ops := runOps(r, ser)
	v.Facts = runFacts(r)
	for _, k := range r.Changed {
		v.Changed = append(v.Changed, fact{K: k, V: r.Settings[k]})
	}
	v.KPIs = runKPIs(r)
	v.Headline = headlineTable(r, ops)
	v.Summary = summaryTable(r, ops, open)
	v.ErrClasses = errorTable(r, ops)
	v.ErrSamples = errorSampleTable(r, ops)
	tl, rest := v.addTimeCharts(r, dir, ser, ops, open)
	v.Spectrum = runSpectrum(hl, ops, open)
	v.addTelemetry(r, dir, timelineEnd(tl))
	markRunCharts(v, r)
	v.Faults, v.Events = faultTable(r), eventTable(r)
	v.Audit = auditTable(r)
	if tabs, charts := transactionsFigures(r, timelineEnd(tl)); len(charts) > 0 {
		v.Tx = &txView{Charts: charts, Tables: tabs}
		markChart(&v.Tx.Charts[0], faultMarks(r))
	}
	httpTables, httpCharts, rest := httpFigures(rest)
	v.Scenario, v.ScenCharts = scenarioFigures(rest)
	if t := appTable(r); t != nil {
		httpTables = append(httpTables, *t)
	}
	v.Scenario, v.ScenCharts = append(httpTables, v.Scenario...), append(httpCharts, v.ScenCharts...)
	v.Settings = settingFacts(r)
	return v
}

// isOpenRun reports whether the run's operations had intended start
// times: an open load model, schedule lag or service times.
func isOpenRun(r *results.Run) bool {
	open := r.Load.Open || r.Lag != nil
	for _, s := range r.Summary {
		if s.Service != nil {
			open = true
		}
	}
	return open
}

// readStreams reads series.csv and intervals.hlog, noting on the page a
// file that is missing, damaged or torn; a series that cannot be read is
// empty.
func (v *runView) readStreams(r *results.Run, dir string) (*series, *metrics.IntervalLog) {
	ser, err := readSeries(filepath.Join(dir, results.SeriesFile))
	if err != nil {
		v.Notes = append(v.Notes, missingNote(results.SeriesFile, err)+": the charts over time are left out.")
		ser = &series{Rows: map[string][]seriesRow{}}
	} else if ser.Torn {
		v.Notes = append(v.Notes, "series.csv ends with a torn line (the process died mid-write); it was ignored.")
	}
	hl, err := metrics.ReadIntervalLog(filepath.Join(dir, results.HlogFile), r.Load.WarmupS)
	if err != nil {
		v.Notes = append(v.Notes, missingNote(results.HlogFile, err)+": the percentile spectrum is left out.")
	} else if hl.Torn {
		v.Notes = append(v.Notes, "intervals.hlog ends with a torn line (the process died mid-write); it was ignored.")
	}
	return ser, hl
}

// addTimeCharts draws the charts over time: latency per operation, the
// cache, throughput, errors, concurrency and schedule lag. It returns
// their timeline and the scenario report without the cache's part.
func (v *runView) addTimeCharts(r *results.Run, dir string, ser *series, ops []string, open bool) ([]tick, map[string]any) {
	width := bucketWidth(ser)
	rows := bucketSeries(ser, width)
	note := aggregationNote(width)
	tl := timeline(rows, width)
	for _, op := range ops {
		if len(rows[op]) > 0 {
			v.Latency = append(v.Latency, latencyChart(op, rows[op], tl, open, r.Load.WarmupS, note))
		}
	}
	cache, rest := cacheSection(r, dir, tl, width)
	v.Cache = cache
	sops := seriesOps(ops, rows)
	v.Throughput = perOpChart("Throughput over time", "operations/s", sops, rows, tl, func(r seriesRow) float64 { return rate(r.Count, r) }, true, r.Load.WarmupS, note)
	if r.Totals == nil || r.Totals.Errors > 0 || hasErrors(rows) {
		c := perOpChart("Errors over time", "errors/s", sops, rows, tl, func(r seriesRow) float64 { return rate(r.Errors, r) }, true, r.Load.WarmupS, note)
		v.Errors = &c
	}
	v.addConcurrency(r, dir, sops, rows, tl, note)
	if open {
		v.Lag = lagChart(sops, rows, tl, r.Load.WarmupS, note)
	}
	return tl, rest
}

// addConcurrency draws the sessions in progress of a phases run, or the
// operations in flight from concurrency.csv where the run has them.
func (v *runView) addConcurrency(r *results.Run, dir string, sops []string, rows map[string][]seriesRow, tl []tick, note string) {
	if r.Load.Model == results.ModelPhases {
		c := sessionsChart(sops, rows, tl, r.Load.WarmupS, note)
		v.Concurrency = &c
	}
	if _, err := os.Stat(filepath.Join(dir, results.ConcurrencyFile)); r.Concurrency != nil || err == nil {
		c, cnote := inFlightChart(r, dir, timelineEnd(tl))
		if c != nil {
			v.Concurrency = c
		}
		if cnote != "" {
			v.Notes = append(v.Notes, cnote)
		}
	}
}

// runSpectrum draws each operation's latency percentile spectrum from the
// interval log, if any, with its service time where the log has it.
func runSpectrum(hl *metrics.IntervalLog, ops []string, open bool) chart {
	var lines []spectrumLine
	if hl != nil {
		for i, op := range ops {
			if h := hl.Hists[op]; h != nil {
				lines = append(lines, spectrumLine{Name: op, Hist: h, Color: color(i)})
			}
			if h := hl.Hists[op+".service"]; h != nil {
				lines = append(lines, spectrumLine{Name: op + " service time", Hist: h, Color: color(i), Dash: true})
			}
		}
	}
	snote := "Latency at each percentile of the measured window (warm-up excluded), from the merged interval histograms."
	if open {
		snote += " Solid: latency from the intended start (includes waiting for a late start); dashed: service time from the actual start."
	}
	return spectrumChart("Latency by percentile", lines, snote)
}

// addTelemetry adds the saturation verdict, the telemetry charts up to
// xmax and the telemetry tables, when the run has telemetry.
func (v *runView) addTelemetry(r *results.Run, dir string, xmax float64) {
	_, teleErr := os.Stat(filepath.Join(dir, results.TelemetryFile))
	if r.Telemetry == nil && teleErr != nil {
		return
	}
	v.Saturation = "not judged: the run ended before its telemetry was summarised (the charts come from telemetry.csv)"
	if r.Telemetry != nil {
		v.Saturation = r.Telemetry.Saturation
	}
	var tnote string
	v.TeleCharts, tnote = telemetryCharts(r, dir, xmax, r.Load.WarmupS)
	if tnote != "" {
		v.Notes = append(v.Notes, tnote)
	}
	v.TeleTables = telemetryTables(r.Telemetry)
}

// settingFacts lists every setting by key, those changed from their
// default marked.
func settingFacts(r *results.Run) []fact {
	var out []fact
	changed := map[string]bool{}
	for _, k := range r.Changed {
		changed[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(r.Settings)) {
		f := fact{K: k, V: r.Settings[k]}
		if changed[k] {
			f.Class = "changed"
		}
		out = append(out, f)
	}
	return out
}

func missingNote(file string, err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return file + " is missing"
	}
	return file + " could not be read (" + err.Error() + ")"
}

// runOps lists the operations: those in the summary, then any only in the
// series (a run that stopped before its summary).
func runOps(r *results.Run, s *series) []string {
	ops := slices.Sorted(maps.Keys(r.Summary))
	seen := map[string]bool{}
	for _, op := range ops {
		seen[op] = true
	}
	for _, op := range s.Ops {
		if !seen[op] {
			ops = append(ops, op)
			seen[op] = true
		}
	}
	return ops
}

func seriesOps(ops []string, rows map[string][]seriesRow) []string {
	var out []string
	for _, op := range ops {
		if len(rows[op]) > 0 {
			out = append(out, op)
		}
	}
	return out
}

func hasErrors(rows map[string][]seriesRow) bool {
	for _, rs := range rows {
		for _, r := range rs {
			if r.Errors > 0 {
				return true
			}
		}
	}
	return false
}

func sessionsChart(ops []string, rows map[string][]seriesRow, tl []tick, warmupS float64, note string) chart {
	xs, ys := make([]float64, len(tl)), make([]float64, len(tl))
	for i, tk := range tl {
		xs[i], ys[i] = tk.T, math.NaN()
	}
	for _, op := range ops {
		_, y := align(rows[op], tl, func(r seriesRow) float64 { return float64(r.Sessions) }, math.NaN())
		for i, v := range y {
			ys[i] = nanMax(ys[i], v)
		}
	}
	spec := lineSpec{Title: "Concurrent sessions over time", XLabel: "time since start", XZero: true, XMax: timelineEnd(tl), YLabel: "sessions", XFmt: fmtSeconds,
		Bands: warmupBand(warmupS), Series: []lineSeries{{Name: "sessions in progress", X: xs, Y: ys, Color: color(3)}},
		Note: joinNotes("Sessions in progress at the end of each interval.", note)}
	return spec.render()
}

// lagChart draws the schedule lag over time (p50, p99 and max of each
// interval), or nil when series.csv has no lag columns (a closed model, a
// merged test, an older run).
func lagChart(ops []string, rows map[string][]seriesRow, tl []tick, warmupS float64, note string) *chart {
	lines := []struct {
		name string
		val  func(seriesRow) float64
	}{
		{"p50", func(r seriesRow) float64 { return r.LagP50 }},
		{"p99", func(r seriesRow) float64 { return r.LagP99 }},
		{"max", func(r seriesRow) float64 { return r.LagMax }},
	}
	spec := lineSpec{Title: "Schedule lag over time", XLabel: "time since start", XZero: true, XMax: timelineEnd(tl), YLabel: "ms late", XFmt: fmtSeconds,
		Bands: warmupBand(warmupS), Note: joinNotes(fmt.Sprintf("How late operations started against the schedule in each interval (every operation together); past %s an operation counts as late.", time.Duration(metrics.LateThresholdNs)), note)}
	seen := false
	for i, l := range lines {
		xs, ys := make([]float64, len(tl)), make([]float64, len(tl))
		for j, tk := range tl {
			xs[j], ys[j] = tk.T, math.NaN()
		}
		for _, op := range ops {
			_, y := align(rows[op], tl, l.val, math.NaN())
			for j, v := range y {
				ys[j] = nanMax(ys[j], v)
				seen = seen || !math.IsNaN(v)
			}
		}
		spec.Series = append(spec.Series, lineSeries{Name: "lag " + l.name, X: xs, Y: ys, Color: color(i)})
	}
	if !seen {
		return nil
	}
	c := spec.render()
	return &c
}

// facts collects a page header's facts, leaving out those without a value.
type facts []fact

func (f *facts) add(k, v string) {
	if v != "" {
		*f = append(*f, fact{K: k, V: v})
	}
}

// statusFact is a run's or experiment's status, with its exit code unless
// both say all went well.
func statusFact(status string, exitCode int) string {
	if exitCode != 0 || status != results.StatusOK {
		status += fmt.Sprintf(" (exit code %d)", exitCode)
	}
	return status
}

func runFacts(r *results.Run) []fact {
	var f facts
	add := f.add
	add("status", statusFact(r.Status, r.ExitCode))
	add("scenario", r.Scenario)
	eng := r.Engine
	if s := r.Server; s != nil && s.Version != "" && s.Version != "n/a" {
		eng += " " + s.Version
	}
	add("engine", eng)
	add("topology", topology(r))
	if s := r.Server; s != nil && len(s.Extra) > 0 {
		add("server", kvList(s.Extra))
	}
	if s := r.Server; s != nil && len(s.After) > 0 {
		add("server after the run", kvList(s.After))
	}
	for _, t := range r.Tiers {
		v := t.Engine
		if s := t.Server; s != nil && s.Version != "" && s.Version != "n/a" {
			v += " " + s.Version
		}
		if t.Cluster != nil {
			v += fmt.Sprintf(", cluster %s (%d nodes)", t.Cluster.Name, t.Cluster.Nodes)
		}
		if len(t.Changed) > 0 {
			v += "; changed: " + strings.Join(t.Changed, ", ")
		}
		add(t.Role+" tier", v)
	}
	add("load model", loadText(r.Load))
	dur := fmtDuration(r.MeasuredS) + " measured"
	if r.Load.WarmupS > 0 {
		dur += fmt.Sprintf(", after a %s warm-up (excluded from every figure)", fmtDuration(r.Load.WarmupS))
	}
	if r.StopReason != "" {
		dur += "; stopped: " + r.StopReason
	}
	add("duration", dur)
	when := r.Start.Format("2006-01-02 15:04:05 MST")
	if r.End != nil {
		when += " to " + r.End.Format("15:04:05")
	}
	add("when", when)
	if seg := segmentText(r); seg != "" {
		add("segments", seg)
	}
	if lp := r.LoadPhase; lp != nil && !lp.Skipped {
		add("data load", fmt.Sprintf("%d items in %s (%s/s)", lp.Items, fmtDuration(lp.Seconds), fmtNum(lp.PerS)))
	}
	if r.Lag != nil && r.Lag.P99Ms != nil {
		add("schedule lag", "p99 "+fmtMsAxis(*r.Lag.P99Ms)+" (how late operations started against the schedule)")
	}
	if r.MaxSessions > 0 {
		add("max sessions", fmt.Sprint(r.MaxSessions))
	}
	if c := r.Concurrency; c != nil {
		add("in flight", inFlightText(c))
	}
	if q := r.ClientQueue; q != nil {
		add("client queue", q.Text())
	}
	h := r.Host
	host := fmt.Sprintf("%s, %d CPUs (GOMAXPROCS %d) %s %s/%s", h.Hostname, h.CPUs, h.GoMaxProcs, h.CPUModel, h.OS, h.Arch)
	if h.MemBytes > 0 {
		host += fmt.Sprintf(", %.1f GiB", float64(h.MemBytes)/(1<<30))
	}
	add("host", host)
	if p := r.Process; p != nil {
		add("scalelab process", fmt.Sprintf("CPU %s s user + %s s system (%s µs per operation, %s of the machine), max RSS %.0f MiB",
			fmtNum(p.CPUUserS), fmtNum(p.CPUSysS), fmtNum(p.CPUPerOpUs), fmtPct(p.CPUUtilPerCPU), float64(p.MaxRSSBytes)/(1<<20)))
	}
	add("scalelab", strings.TrimSpace(r.Scalelab.Version+" "+r.Scalelab.Go))
	add("command", strings.Join(r.Command, " "))
	return f
}

func topology(r *results.Run) string {
	if c := r.Cluster; c != nil {
		t := fmt.Sprintf("local cluster %s, %d node(s)", c.Name, c.Nodes)
		if len(c.Params) > 0 {
			t += " (" + kvList(c.Params) + ")"
		}
		return t
	}
	if s := r.Server; s != nil && s.Target != "" {
		return "single server: " + s.Target
	}
	return ""
}

func loadText(l results.Load) string {
	parts := []string{l.Model}
	if len(l.Params) > 0 {
		keys := slices.Sorted(maps.Keys(l.Params))
		var ps []string
		for _, k := range keys {
			ps = append(ps, fmt.Sprintf("%s=%v", k, l.Params[k]))
		}
		parts = append(parts, strings.Join(ps, ", "))
	}
	if l.Ops > 0 {
		parts = append(parts, fmt.Sprintf("ops budget %d", l.Ops))
	}
	parts = append(parts, fmt.Sprintf("seed %d", l.Seed))
	return strings.Join(parts, "; ")
}

func kvList(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	var out []string
	for _, k := range keys {
		out = append(out, k+"="+m[k])
	}
	return strings.Join(out, ", ")
}

// runKPIs are the run's headline figures for the strip at the top of its
// page: throughput, operations and errors of all operations, the highest
// p99 and the measured time.
func runKPIs(r *results.Run) []fact {
	var k []fact
	if t := r.Totals; t != nil {
		k = append(k, fact{K: "operations/s", V: fmtNum(t.ThroughputPerS)},
			fact{K: "operations", V: fmt.Sprint(t.Count)},
			fact{K: "errors", V: fmt.Sprintf("%d (%s)", t.Errors, fmtPct(t.ErrorRate))})
	}
	worst, wop := -1.0, ""
	for op, s := range r.Summary {
		if s.P99Ms != nil && *s.P99Ms > worst {
			worst, wop = *s.P99Ms, op
		}
	}
	if wop != "" {
		k = append(k, fact{K: "highest p99 (" + wop + ")", V: fmtMsAxis(worst)})
	}
	k = append(k, fact{K: "measured", V: fmtDuration(measuredS(r))})
	return k
}

// headlineTable is each operation's throughput, p50, p99 and errors, for
// the top of the run's page (the summary per operation has the rest).
func headlineTable(r *results.Run, ops []string) figTable {
	t := figTable{Cols: []string{"operation", "ops/s", "p50 ms", "p99 ms", "errors", "error %"}}
	for _, op := range ops {
		s, ok := r.Summary[op]
		if !ok {
			continue
		}
		errPct := math.NaN()
		if d := s.Count + s.Errors; d > 0 {
			errPct = float64(s.Errors) / float64(d)
		}
		t.Rows = append(t.Rows, []string{op, fmtNum(s.ThroughputPerS), ms(s.P50Ms), ms(s.P99Ms), fmt.Sprint(s.Errors), fmtPct(errPct)})
	}
	return t
}

func summaryTable(r *results.Run, ops []string, open bool) figTable {
	t := figTable{Cols: []string{"operation", "started", "ok", "errors", "error %", "ops/s", "mean ms", "p50", "p90", "p95", "p99", "p99.9", "max"},
		Note: "Latencies in ms from the intended start, over the measured window. A dash marks a percentile the sample count cannot support (p99 needs 100 operations)."}
	if open {
		t.Cols = append(t.Cols, "svc p50", "svc p99", "svc max", "late")
		t.Note += " svc: service time from the actual start; late: started more than 10 ms after the intended start."
	}
	for _, op := range ops {
		s, ok := r.Summary[op]
		if !ok {
			continue
		}
		errPct := math.NaN()
		if d := s.Count + s.Errors; d > 0 {
			errPct = float64(s.Errors) / float64(d)
		}
		row := []string{op, fmt.Sprint(s.Started), fmt.Sprint(s.Count), fmt.Sprint(s.Errors), fmtPct(errPct), fmtNum(s.ThroughputPerS),
			ms(s.MeanMs), ms(s.P50Ms), ms(s.P90Ms), ms(s.P95Ms), ms(s.P99Ms), ms(s.P999Ms), ms(s.MaxMs)}
		if open {
			var sv metrics.Service
			if s.Service != nil {
				sv = *s.Service
			}
			row = append(row, ms(sv.ServiceP50Ms), ms(sv.ServiceP99Ms), ms(sv.ServiceMaxMs), fmt.Sprint(s.Late))
		}
		t.Rows = append(t.Rows, row)
	}
	for _, op := range ops {
		if c := r.Summary[op].Composite; c != "" {
			t.Note += " " + op + ": " + c + " (not in the total)."
		}
	}
	if tot := r.Totals; tot != nil && len(t.Rows) > 1 {
		row := []string{"total", fmt.Sprint(tot.Started), fmt.Sprint(tot.Count), fmt.Sprint(tot.Errors), fmtPct(tot.ErrorRate), fmtNum(tot.ThroughputPerS)}
		for len(row) < len(t.Cols) {
			row = append(row, "")
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// errorTable counts errors per operation and class, with how long failed
// operations took to fail.
func errorTable(r *results.Run, ops []string) *figTable {
	classes := map[string]bool{}
	for _, s := range r.Summary {
		for c, n := range s.ErrorsByClass {
			if n > 0 {
				classes[c] = true
			}
		}
	}
	if len(classes) == 0 {
		return nil
	}
	var cols []string
	for _, c := range metrics.ErrorClasses() {
		if classes[c.String()] {
			cols = append(cols, c.String())
			delete(classes, c.String())
		}
	}
	cols = append(cols, slices.Sorted(maps.Keys(classes))...)
	t := &figTable{Title: "Errors by class", Cols: append(append([]string{"operation"}, cols...), "fail p50 ms", "fail p99 ms", "in flight at stop"),
		Note: "timeout: deadline exceeded; refused: connection refused or reset; rejected: the store refused the request (overload, throttling); not_found; integrity: wrong data read back; other. The fail columns are how long failed operations took to fail."}
	for _, op := range ops {
		s, ok := r.Summary[op]
		if !ok {
			continue
		}
		row := []string{op}
		for _, c := range cols {
			row = append(row, fmt.Sprint(s.ErrorsByClass[c]))
		}
		var el metrics.ErrorLatency
		if s.ErrorLatency != nil {
			el = *s.ErrorLatency
		}
		row = append(row, ms(el.ErrorP50Ms), ms(el.ErrorP99Ms), fmt.Sprint(s.InFlight))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// errorSampleTable lists what the store said: the first distinct error
// messages of each operation (escaped like every string on the page).
func errorSampleTable(r *results.Run, ops []string) *figTable {
	t := &figTable{Title: "Error messages", Cols: []string{"operation", "message"}, Wrap: true,
		Note: fmt.Sprintf("The first %d distinct messages of each operation, passwords redacted.", metrics.MaxErrorSamples)}
	for _, op := range ops {
		for _, m := range r.Summary[op].ErrorSamples {
			t.Rows = append(t.Rows, []string{op, m})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

var runTmpl = newTemplate("run", `{{define "run"}}{{template "head" .Meta}}
<h1>{{.Heading}} <span class="status {{.Run.Status}}">{{.Run.Status}}</span></h1>
{{with .Run.Error}}<div class="alert"><b>Error:</b> {{.}}</div>{{end}}
{{range .Run.Failures}}<div class="alert"><b>Failed check:</b> {{.}}</div>{{end}}
<section id="headline">
<div class="kpis">{{range .KPIs}}<div class="kpi"><b>{{.V}}</b><span>{{.K}}</span></div>{{end}}</div>
{{if .Headline.Rows}}{{template "table" .Headline}}{{end}}
</section>
{{range .Run.Warnings}}<div class="alert warn"><b>Warning:</b> {{.}}</div>{{end}}
{{range .Notes}}<div class="alert note">{{.}}</div>{{end}}
<h2>The run</h2>
{{template "facts" .Facts}}
{{if .Changed}}<h3>Settings that differ from their defaults</h3>{{template "facts" .Changed}}{{else}}<p class="mut">Every setting has its default value.</p>{{end}}
<h2>Summary per operation</h2>
{{template "table" .Summary}}
{{with .ErrClasses}}{{template "table" .}}{{end}}
{{with .ErrSamples}}{{template "table" .}}{{end}}
{{if or .Faults .Events}}<h2>Faults and cluster events</h2>
<p class="mut">Dotted purple vertical lines on the charts over time mark the faults and the cluster's return to health.</p>
{{with .Faults}}{{template "table" .}}{{end}}{{with .Events}}{{template "table" .}}{{end}}{{end}}
{{with .Audit}}<h2>Acknowledged-write audit</h2>
{{template "table" .}}{{end}}
<h2>Latency over time</h2>
{{if .Latency}}<div class="grid2">{{range .Latency}}{{template "chart" .}}{{end}}</div>{{else}}<p class="empty">No intervals to draw.</p>{{end}}
{{with .Cache}}<h2>Cache</h2>
{{with .Summary}}<p>{{.}}</p>{{end}}{{with .Note}}<p class="mut">{{.}}</p>{{end}}
{{if .Charts}}<h3>Cache hit rate and stale reads over time</h3>
<div class="grid2">{{range .Charts}}{{template "chart" .}}{{end}}</div>{{end}}
{{range .Tables}}{{template "table" .}}{{end}}{{end}}
<h2>Throughput and errors over time</h2>
<div class="grid2">{{template "chart" .Throughput}}{{with .Errors}}{{template "chart" .}}{{else}}<p class="mut">No operation failed.</p>{{end}}</div>
{{with .Concurrency}}<h2>Concurrency</h2>{{template "chart" .}}{{end}}
{{with .Tx}}<h2>Requests over time and by phase</h2>
<div class="grid2">{{range .Charts}}{{template "chart" .}}{{end}}</div>
{{range .Tables}}{{template "table" .}}{{end}}{{end}}
{{with .Lag}}<h2>Schedule lag</h2>{{template "chart" .}}{{end}}
{{if .Saturation}}<h2>Which tier saturated</h2>
<p class="saturation"><b>Saturation:</b> {{.Saturation}}</p>
{{if .TeleCharts}}<div class="grid2">{{range .TeleCharts}}{{template "chart" .}}{{end}}</div>{{end}}
{{range .TeleTables}}{{template "table" .}}{{end}}{{end}}
<h2>Latency percentile spectrum</h2>
{{template "chart" .Spectrum}}
{{if .Scenario}}<h2>Scenario figures</h2>
<p class="mut">Figures the scenario measured beyond latencies (freshness, stale reads, ...).</p>
{{if .ScenCharts}}<div class="grid2">{{range .ScenCharts}}{{template "chart" .}}{{end}}</div>{{end}}
{{range .Scenario}}{{template "table" .}}{{end}}{{end}}
<h2>Settings</h2>
<p class="mut">Every setting as resolved for this run; bold rows differ from the default.</p>
<div class="scroll"><table><thead><tr><th>key</th><th>value</th></tr></thead><tbody>
{{range .Settings}}<tr{{with .Class}} class="{{.}}"{{end}}><td>{{.K}}</td><td class="wrap">{{.V}}</td></tr>
{{end}}</tbody></table></div>
{{template "foot" .Meta}}{{end}}`)
