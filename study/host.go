package study

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// HostBusyShare is the share of the host's CPUs a run's mean host CPU
// must reach for its host to count as saturated (the telemetry's own
// at-limit threshold).
const HostBusyShare = 0.9

// HostSaturated reports whether a run's host saturated, from its
// telemetry: the machine's CPUs busy on average (every process of the
// machine: the run's tiers, scalelab and anything else running) at
// HostBusyShare of its cores or more, or the run's saturation verdict
// naming the host's CPUs. A node at its own CPU limit does not hide a busy
// host: the figures are read beside the verdict.
func HostSaturated(t *results.Telemetry) bool {
	if t == nil {
		return false
	}
	if t.Saturated != nil && t.Saturated.Resource == "host" {
		return true
	}
	return t.HostCPUs > 0 && t.HostCPUMean >= HostBusyShare*float64(t.HostCPUs)
}

// mostly reports whether most of a figure's measured runs saturated the
// host.
func (f *Figure) mostly() bool { return f.Runs > 0 && 2*f.HostSaturated > f.Runs }

func (f *Figure) hostText() string {
	return fmt.Sprintf("%d of %d runs of %s", f.HostSaturated, f.Runs, f.Label)
}

// hostRule lets the host's telemetry overrule a verdict the host rather
// than the finding's lever could have decided:
//
//   - a topology row (nodes, servers, routers compared) whose host
//     saturated in most runs of either side is not reproducible here: the
//     nodes' CPU shares were not there to be had, so more nodes only shared
//     the same busy cores;
//   - any other row whose host saturated in most runs of one side and not
//     of the other is not reproducible here: the two sides ran on machines
//     in different states;
//   - a row whose both sides ran on a saturated host keeps its verdict and
//     says so.
func hostRule(f *Finding, m, r *Figure, o *Outcome) {
	sm, sr := m.mostly(), r.mostly()
	switch {
	case f.Topology && (sm || sr):
		var sides []string
		for _, fig := range []*Figure{m, r} {
			if fig.mostly() {
				sides = append(sides, fig.hostText())
			}
		}
		o.Verdict = NotReproducible
		o.Reason = fmt.Sprintf("the host's CPUs saturated in %s: the machine, not the topology, decided this row (%s)", strings.Join(sides, " and "), o.Reason)
	case sm != sr:
		busy, calm := m, r
		if sr {
			busy, calm = r, m
		}
		o.Verdict = NotReproducible
		o.Reason = fmt.Sprintf("the host's CPUs saturated in %s but in %s: the host's state, not the lever, may have decided this row (%s)", busy.hostText(), calm.hostText(), o.Reason)
	case sm:
		o.Reason += fmt.Sprintf("; the host's CPUs saturated in %s and %s alike", m.hostText(), r.hostText())
	}
}

// runsOf calls fn with each measured run of an experiment's results
// directory, in the order of its combinations.
func runsOf(expDir string, ex *results.Experiment, fn func(c *results.CombinationResult, run *results.Run)) {
	for i := range ex.Combinations {
		c := &ex.Combinations[i]
		for _, ref := range c.Runs {
			if !ref.Measured {
				continue
			}
			run, err := results.Read(filepath.Join(expDir, ref.Dir))
			if err != nil {
				continue
			}
			fn(c, run)
		}
	}
}

// HostLoad is what the host's CPUs did during an experiment's measured
// runs (their telemetry), all processes of the machine counted.
type HostLoad struct {
	Experiment string
	Runs       int     // measured runs with telemetry
	CPUs       int     // the host's
	Mean       float64 // mean over the runs of their mean host CPU, cores
	Min, Max   float64 // the runs' lowest and highest mean, cores
	// Other is the mean, over the runs that reported it, of the CPU
	// processes outside the run's tiers used (other work on the machine).
	Other     float64
	OtherRuns int
	Saturated int // runs whose host saturated (HostSaturated)
}

// String is the load in one line.
func (h HostLoad) String() string {
	if h.Runs == 0 {
		return h.Experiment + ": no run with telemetry"
	}
	s := fmt.Sprintf("%s: host CPU %s of %d cores on average over %d runs (runs' means %s to %s); saturated in %d of %d runs",
		h.Experiment, fmtNum(h.Mean), h.CPUs, h.Runs, fmtNum(h.Min), fmtNum(h.Max), h.Saturated, h.Runs)
	if h.OtherRuns > 0 {
		s += fmt.Sprintf("; other processes on the machine %s cores on average in the %d busy runs", fmtNum(h.Other), h.OtherRuns)
	}
	return s
}

// hostLoad sums an experiment's runs' host telemetry.
func hostLoad(name, expDir string, ex *results.Experiment) HostLoad {
	h := HostLoad{Experiment: name}
	runsOf(expDir, ex, func(_ *results.CombinationResult, run *results.Run) {
		t := run.Telemetry
		if t == nil || t.HostCPUs == 0 {
			return
		}
		if h.Runs == 0 || t.HostCPUMean < h.Min {
			h.Min = t.HostCPUMean
		}
		h.Max = max(h.Max, t.HostCPUMean)
		h.Mean += t.HostCPUMean
		h.CPUs = t.HostCPUs
		h.Runs++
		if t.OtherCPUMean > 0 {
			h.Other += t.OtherCPUMean
			h.OtherRuns++
		}
		if HostSaturated(t) {
			h.Saturated++
		}
	})
	if h.Runs > 0 {
		h.Mean /= float64(h.Runs)
	}
	if h.OtherRuns > 0 {
		h.Other /= float64(h.OtherRuns)
	}
	return h
}

// tierScale is one tier's nodes and CPU limits over an experiment's runs.
type tierScale struct {
	minNodes, maxNodes int
	limits             []float64 // distinct CPU limits, cores; 0: none
}

// scaleText says at which CPU share each tier's nodes ran in an
// experiment's runs (the limits their telemetry recorded), e.g.
// "app 1 to 4 nodes at 0.25 cores each; generator 1 node with no CPU
// limit; store 2 nodes at 0.25 cores each".
func scaleText(name, expDir string, ex *results.Experiment) string {
	tiers := map[string]*tierScale{}
	runsOf(expDir, ex, func(_ *results.CombinationResult, run *results.Run) {
		if run.Telemetry == nil {
			return
		}
		count := map[string]int{}
		for _, n := range run.Telemetry.Nodes {
			count[n.Tier]++
			ts := tiers[n.Tier]
			if ts == nil {
				ts = &tierScale{}
				tiers[n.Tier] = ts
			}
			var l float64
			if n.Limits != nil {
				l = n.Limits.CPUs
			}
			if !slices.Contains(ts.limits, l) {
				ts.limits = append(ts.limits, l)
			}
		}
		for tier, k := range count {
			ts := tiers[tier]
			if ts.minNodes == 0 || k < ts.minNodes {
				ts.minNodes = k
			}
			ts.maxNodes = max(ts.maxNodes, k)
		}
	})
	if len(tiers) == 0 {
		return name + ": no run with telemetry"
	}
	names := make([]string, 0, len(tiers))
	for t := range tiers {
		names = append(names, t)
	}
	sort.Strings(names)
	var parts []string
	for _, t := range names {
		ts := tiers[t]
		nodes := fmt.Sprintf("%d", ts.maxNodes)
		if ts.minNodes != ts.maxNodes {
			nodes = fmt.Sprintf("%d to %d", ts.minNodes, ts.maxNodes)
		}
		unit := "nodes"
		if ts.maxNodes == 1 {
			unit = "node"
		}
		sort.Float64s(ts.limits)
		var ls []string
		for _, l := range ts.limits {
			if l == 0 {
				ls = append(ls, "with no CPU limit")
			} else {
				ls = append(ls, fmt.Sprintf("at %g cores each", l))
			}
		}
		parts = append(parts, fmt.Sprintf("%s %s %s %s", t, nodes, unit, strings.Join(ls, " or ")))
	}
	return name + ": " + strings.Join(parts, "; ")
}

// LoadAvg is the host's load averages over 1, 5 and 15 minutes
// (/proc/loadavg); nil where the system does not say.
func LoadAvg() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	return parseLoadAvg(string(b))
}

// parseLoadAvg reads the first three fields of /proc/loadavg.
func parseLoadAvg(s string) []float64 {
	f := strings.Fields(s)
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil
		}
		out[i] = v
	}
	return out
}

// loadAvgText is an experiment's load averages at its start and end.
func loadAvgText(re RunExperiment) string {
	if len(re.LoadStart) != 3 || len(re.LoadEnd) != 3 {
		return ""
	}
	return fmt.Sprintf("load average (1, 5, 15 min) %g, %g, %g at the start, %g, %g, %g at the end",
		re.LoadStart[0], re.LoadStart[1], re.LoadStart[2], re.LoadEnd[0], re.LoadEnd[1], re.LoadEnd[2])
}
