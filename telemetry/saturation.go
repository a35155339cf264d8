package telemetry

import (
	"fmt"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// saturatedShare is the share of the measured samples a node must spend at
// its CPU limit to be named the one that saturated.
const saturatedShare = 0.5

// queueBacklog is the queue length of a server's thread pool from which
// the pool counts as saturated.
const queueBacklog = 100

// scope words a verdict for the stretch of the run it judges.
type scope struct {
	seconds string // what a node's at-limit share is of
	none    string // the verdict when nothing saturated
	empty   string // the verdict without a sample
}

// wholeRun is the scope of the run's own verdict; phase that of one phase
// (JudgeWindows).
var (
	wholeRun = scope{seconds: "the measured seconds",
		none:  "no tier saturated over the measured window: the pace came from the load itself, the client or the network, or a limit held only part of the run (see the CPU charts)",
		empty: "not judged: no sample in the measured window"}
	phase = scope{seconds: "the phase's seconds", none: "no tier saturated in this phase",
		empty: "not judged: no measured sample in this phase (the warm-up, or the run ended)"}
)

// atLimitSample reports whether a sample of cores counts as at a node's
// CPU limit (0: none known).
func atLimitSample(cores, limit float64) bool { return limit > 0 && cores >= atLimit*limit }

// judge fills t.Saturation and t.Saturated, worded for sc: the node
// (store, cache, app, or scalelab itself) that spent most of the measured
// window at its CPU limit; else engine-reported rejections, drops or
// blocked tasks, or a pool queue of queueBacklog tasks or more; else the
// host's CPUs when the tiers together used them all; else "no tier
// saturated".
func judge(t *results.Telemetry, sc scope) {
	var best *results.NodeUsage
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.AtLimitShare < saturatedShare {
			continue
		}
		if best == nil || n.AtLimitShare > best.AtLimitShare {
			best = n
		}
	}
	if best != nil {
		limit := float64(t.HostCPUs)
		what := fmt.Sprintf("the host's %d CPUs", t.HostCPUs)
		if best.Limits != nil && best.Limits.CPUs > 0 {
			limit = best.Limits.CPUs
			what = fmt.Sprintf("its CPU limit of %g cores", limit)
		}
		name := best.Tier + " " + best.Node
		if best.Tier == TierGenerator {
			name = "the generator (scalelab itself)"
			if best.Role != "" {
				name = "the " + best.Role + " (scalelab itself)"
			}
		}
		t.Saturated = &results.Saturated{Tier: best.Tier, Node: best.Node, Resource: "cpu", Share: best.AtLimitShare, Limit: limit}
		t.Saturation = fmt.Sprintf("%s saturated: at %s in %.0f%% of %s (mean %.2f cores)", name, what, 100*best.AtLimitShare, sc.seconds, best.CPUMeanCores)
		return
	}
	for _, e := range t.EngineStats {
		if Alarming(e.Name) && !strings.Contains(e.Name, "deadlocks") && e.Last > e.First {
			t.Saturated = &results.Saturated{Tier: e.Tier, Node: e.Name, Resource: "pool"}
			t.Saturation = fmt.Sprintf("%s tier saturated: %s grew by %g during the run", e.Tier, e.Name, e.Last-e.First)
			return
		}
	}
	for _, e := range t.EngineStats {
		if (strings.HasSuffix(e.Name, ".queue") || strings.HasSuffix(e.Name, ".pending")) && e.Max >= queueBacklog {
			t.Saturated = &results.Saturated{Tier: e.Tier, Node: e.Name, Resource: "pool"}
			t.Saturation = fmt.Sprintf("%s tier saturated: %s reached %g queued tasks", e.Tier, e.Name, e.Max)
			return
		}
	}
	if t.HostCPUs > 0 && t.HostCPUMean >= atLimit*float64(t.HostCPUs) {
		t.Saturated = &results.Saturated{Tier: TierHost, Node: "cpu", Resource: "host", Limit: float64(t.HostCPUs)}
		t.Saturation = fmt.Sprintf("no single node at its limit, but the host's %d CPUs were busy (mean %.2f cores): the tiers share one machine, and it saturated", t.HostCPUs, t.HostCPUMean)
		return
	}
	t.Saturation = sc.none
	if t.Samples == 0 {
		t.Saturation = sc.empty
	}
}
