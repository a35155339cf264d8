package report

import (
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/scalelab/scalelab/results"
)

// teleSeries is one node's rows of telemetry.csv.
type teleSeries struct {
	tier, node string
	t, cpu     []float64
	rss        []float64
}

// readTelemetry reads telemetry.csv into one series per node, in the order
// the nodes first appear (store first, scalelab last, the host apart).
func readTelemetry(path string) (nodes []*teleSeries, host *teleSeries, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rd := csv.NewReader(f)
	rd.FieldsPerRecord = -1
	recs, err := rd.ReadAll()
	if err != nil && len(recs) == 0 {
		return nil, nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	by := map[string]*teleSeries{}
	for i, r := range recs {
		if i == 0 || len(r) < 8 {
			continue
		}
		ts, err1 := strconv.ParseFloat(r[0], 64)
		cpu, err2 := strconv.ParseFloat(r[4], 64)
		if err1 != nil || err2 != nil {
			continue // a torn last line
		}
		rss, _ := strconv.ParseFloat(r[7], 64)
		key := r[1] + "\x00" + r[2]
		s := by[key]
		if s == nil {
			s = &teleSeries{tier: r[1], node: r[2]}
			by[key] = s
			if r[1] == "host" {
				host = s
			} else {
				nodes = append(nodes, s)
			}
		}
		s.t, s.cpu, s.rss = append(s.t, ts), append(s.cpu, cpu), append(s.rss, rss)
	}
	for _, s := range append(append([]*teleSeries(nil), nodes...), host) {
		if s != nil {
			s.dropShort()
		}
	}
	sort.SliceStable(nodes, func(i, j int) bool { return tierRank(nodes[i].tier) < tierRank(nodes[j].tier) })
	return nodes, host, nil
}

// dropShort leaves out the samples too short to chart (tooShort): a CPU
// rate over the run's last millisecond is no point of its own.
func (s *teleSeries) dropShort() {
	into := foldShort(s.t)
	n := 0
	for i, j := range into {
		if j == i {
			s.t[n], s.cpu[n], s.rss[n] = s.t[i], s.cpu[i], s.rss[i]
			n++
		}
	}
	s.t, s.cpu, s.rss = s.t[:n], s.cpu[:n], s.rss[:n]
}

func tierRank(t string) int {
	switch t {
	case "store":
		return 0
	case "generator":
		return 9
	}
	return 5
}

// telemetryCharts draws CPU per node (one line per node, grouped by tier,
// the host's busy CPUs dashed, each node's CPU limit as a reference line)
// and memory per node, on the run's time axis.
func telemetryCharts(r *results.Run, dir string, xmax, warmupS float64) ([]chart, string) {
	nodes, host, err := readTelemetry(filepath.Join(dir, results.TelemetryFile))
	if err != nil {
		return nil, missingNote(results.TelemetryFile, err) + ": the CPU and memory charts are left out."
	}
	cpu := lineSpec{Title: "CPU per node over time", XLabel: "time since start", XZero: true, XMax: xmax, YLabel: "CPU (cores)",
		XFmt: fmtSeconds, Bands: warmupBand(warmupS), Empty: "no telemetry samples",
		Note: "Cores busy per process tree (1.0 = one core all the time), sampled every " + fmtInterval(r) + "; dashed grey: every process of the host."}
	mem := lineSpec{Title: "Memory per node over time", XLabel: "time since start", XZero: true, XMax: xmax, YLabel: "resident memory",
		XFmt: fmtSeconds, YFmt: fmtBytesAxis, Bands: warmupBand(warmupS), Empty: "no telemetry samples",
		Note: "Resident memory of each process tree (shared pages counted per process), or the cgroup's memory in use for a confined node."}
	for i, s := range nodes {
		name := s.tier + " " + s.node
		cpu.Series = append(cpu.Series, lineSeries{Name: name, X: s.t, Y: s.cpu, Color: color(i)})
		mem.Series = append(mem.Series, lineSeries{Name: name, X: s.t, Y: s.rss, Color: color(i)})
	}
	if host != nil {
		cpu.Series = append(cpu.Series, lineSeries{Name: "host (all processes)", X: host.t, Y: host.cpu, Color: "#888888", Dash: true})
	}
	seen := map[float64]bool{}
	if r.Telemetry != nil {
		for _, n := range r.Telemetry.Nodes {
			if n.Limits != nil && n.Limits.CPUs > 0 && !seen[n.Limits.CPUs] {
				seen[n.Limits.CPUs] = true
				cpu.RefY = append(cpu.RefY, refLine{V: n.Limits.CPUs, Label: fmt.Sprintf("limit %g cores", n.Limits.CPUs)})
			}
		}
	}
	return []chart{cpu.render(), mem.render()}, ""
}

func fmtInterval(r *results.Run) string {
	if r.Telemetry == nil || r.Telemetry.IntervalS <= 0 {
		return "second"
	}
	return fmt.Sprintf("%g s", r.Telemetry.IntervalS)
}

// fmtBytesAxis labels a memory axis.
func fmtBytesAxis(v float64) string { return fmtBytes(int64(v)) }

// fmtBytes is 512 KiB, 1.5 GiB ...
func fmtBytes(b int64) string {
	v := float64(b)
	for _, u := range []string{"B", "KiB", "MiB", "GiB"} {
		if math.Abs(v) < 1024 || u == "GiB" {
			if u == "B" {
				return fmt.Sprintf("%.0f B", v)
			}
			return fmt.Sprintf("%.1f %s", v, u)
		}
		v /= 1024
	}
	return ""
}

// telemetryTables are the nodes' and tiers' figures over the measured
// window and the engine stats that moved most.
func telemetryTables(t *results.Telemetry) []figTable {
	if t == nil {
		return nil
	}
	nodes := figTable{Title: "Resource use per node (measured window)",
		Note: "CPU in cores; \"at limit\" is the share of samples at 90% or more of the node's CPU limit (or of the host's CPUs when it has none).",
		Cols: []string{"tier", "node", "role", "pid", "source", "limit", "CPU mean", "CPU max", "at limit", "peak memory", "read", "written", "threads"}}
	for _, n := range t.Nodes {
		limit := "-"
		if n.Limits != nil {
			limit = limitText(n.Limits)
		}
		pid := strconv.Itoa(n.PID)
		if n.PID == 0 {
			pid = "-" // observed by another system
		}
		nodes.Rows = append(nodes.Rows, []string{n.Tier, n.Node, n.Role, pid, n.Source, limit,
			fmt.Sprintf("%.2f", n.CPUMeanCores), fmt.Sprintf("%.2f", n.CPUMaxCores), fmt.Sprintf("%.0f%%", 100*n.AtLimitShare),
			fmtBytes(n.PeakRSSBytes), fmtBytes(n.ReadBytes), fmtBytes(n.WriteBytes), strconv.Itoa(n.MaxThreads)})
	}
	tiers := figTable{Title: "Resource use per tier", Note: "CPU per operation: the tier's CPU time in the measured window divided by the measured operations.",
		Cols: []string{"tier", "nodes", "CPU mean", "CPU max", "CPU per operation", "peak memory"}}
	for _, x := range t.Tiers {
		tiers.Rows = append(tiers.Rows, []string{x.Tier, strconv.Itoa(x.Nodes), fmt.Sprintf("%.2f", x.CPUMeanCores), fmt.Sprintf("%.2f", x.CPUMaxCores),
			fmt.Sprintf("%.1f µs", x.CPUPerOpUs), fmtBytes(x.PeakRSSBytes)})
	}
	for _, x := range t.NoSamples {
		tiers.Rows = append(tiers.Rows, []string{x, "-", "no samples", "-", "-", "-"})
	}
	out := []figTable{nodes, tiers}
	if len(t.Phases) > 0 {
		ph := figTable{Title: "Saturation by phase", Note: "Each phase judged on its own from the CPU samples in it, as the run is above (engine stats stay with the whole run's verdict).",
			Cols: []string{"phase", "from", "to", "samples", "host CPU mean", "verdict"}}
		for _, w := range t.Phases {
			ph.Rows = append(ph.Rows, []string{w.Window, fmt.Sprintf("%g s", w.FromS), fmt.Sprintf("%g s", w.ToS), strconv.Itoa(w.Samples),
				fmt.Sprintf("%.2f", w.HostCPUMean), w.Saturation})
		}
		out = append([]figTable{ph}, out...)
	}
	if len(t.Unobserved) > 0 {
		un := figTable{Title: "Tiers not observed", Note: "Tiers the run used whose CPU nothing measured: the verdict cannot say whether they saturated. Map them to a Prometheus server's series (--telemetry-source, --observe).",
			Cols: []string{"tier", "at"}}
		for _, u := range t.Unobserved {
			un.Rows = append(un.Rows, []string{u.Tier, u.At})
		}
		out = append(out, un)
	}
	for _, src := range t.Sources {
		keys := slices.Sorted(maps.Keys(src.Observe))
		st := figTable{Title: "Observed through " + src.Kind + " at " + src.URL,
			Note: fmt.Sprintf("%d nodes and %d exporter figures read over the run.", src.Nodes, src.Series), Cols: []string{"mapping", "series"}}
		for _, k := range keys {
			st.Rows = append(st.Rows, []string{k, src.Observe[k]})
		}
		for _, w := range src.Warnings {
			st.Rows = append(st.Rows, []string{"warning", w})
		}
		out = append(out, st)
	}
	if len(t.EngineStats) > 0 {
		es := figTable{Title: "Engine stats that moved most", Note: "What the servers reported about themselves at the first and last sample (every sample is in engine_stats.csv); rejections and drops are always listed.",
			Cols: []string{"tier", "stat", "first", "last", "change", "max"}}
		for _, e := range t.EngineStats {
			es.Rows = append(es.Rows, []string{e.Tier, e.Name, fmtNum(e.First), fmtNum(e.Last), fmtNum(e.Last - e.First), fmtNum(e.Max)})
		}
		out = append(out, es)
	}
	return out
}

func limitText(l *results.Limits) string {
	s := ""
	add := func(x string) {
		if s != "" {
			s += ", "
		}
		s += x
	}
	if l.CPUs > 0 {
		add(fmt.Sprintf("%g cores", l.CPUs))
	}
	if l.MemoryBytes > 0 {
		add(fmtBytes(l.MemoryBytes))
	}
	if l.CPUSet != "" {
		add("cpus " + l.CPUSet)
	}
	return s
}
