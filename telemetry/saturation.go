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
	seconds      string // what a node's at-limit share is of
	none         string // the verdict when nothing saturated
	noneObserved string // the same, when a tier is not observed
	empty        string // the verdict without a sample
}

// wholeRun is the scope of the run's own verdict; phase that of one phase
// (JudgeWindows).
var (
	wholeRun = scope{seconds: "the measured seconds",
		none:         "no tier saturated over the measured window: the pace came from the load itself, the client or the network, or a limit held only part of the run (see the CPU charts)",
		noneObserved: "no observed tier was at its limit over the measured window",
		empty:        "not judged: no sample in the measured window"}
	phase = scope{seconds: "the phase's seconds", none: "no tier saturated in this phase", noneObserved: "no observed tier at its limit in this phase",
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
		if !IsLocal(*best) {
			t.Saturation += " (from " + best.Source + "'s figures)"
		}
		if blind := unobservedWords(t.Unobserved); blind != "" {
			t.Saturation += "; " + blind
		}
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
	blind := unobservedWords(t.Unobserved)
	if t.HostCPUs > 0 && t.HostCPUMean >= atLimit*float64(t.HostCPUs) {
		ours := localCores(t)
		t.OtherCPUMean = max(0, t.HostCPUMean-ours)
		busy := fmt.Sprintf("the host's %d CPUs were busy (mean %.2f cores)", t.HostCPUs, t.HostCPUMean)
		switch {
		case blind != "":
			t.Saturation = fmt.Sprintf("unknown: %s; %s: the run's observed tiers on this machine used %.2f of them, other processes %.2f (the unobserved tier's may be among them)", blind, busy, ours, t.OtherCPUMean)
		case t.OtherCPUMean > ours:
			t.Saturated = &results.Saturated{Tier: TierOther, Node: "cpu", Resource: "host", Limit: float64(t.HostCPUs)}
			t.Saturation = fmt.Sprintf("no tier of the run at its limit, but %s, mostly by other processes on this machine (%.2f cores; the run's tiers %.2f): the machine was the limit, not the run's tiers", busy, t.OtherCPUMean, ours)
		default:
			t.Saturated = &results.Saturated{Tier: TierHost, Node: "cpu", Resource: "host", Limit: float64(t.HostCPUs)}
			t.Saturation = fmt.Sprintf("no single node at its limit, but %s: the run's tiers used %.2f of them and other processes on this machine %.2f; the tiers share one machine, and it saturated", busy, ours, t.OtherCPUMean)
		}
		return
	}
	switch {
	case t.Samples == 0:
		t.Saturation = sc.empty
	case blind != "":
		t.Saturation = "unknown: " + blind + "; " + sc.noneObserved
	default:
		t.Saturation = sc.none
	}
}

// TierOther is the tier a verdict names when the machine's CPUs were busy
// mostly with processes outside the run.
const TierOther = "other"

// localCores is the CPU the run's tiers used on this machine: the nodes
// scalelab sampled from /proc (itself included) and the processes of this
// machine another system observed.
func localCores(t *results.Telemetry) float64 {
	var c float64
	for _, n := range t.Nodes {
		if IsLocal(n) || n.OnThisHost {
			c += n.CPUMeanCores
		}
	}
	return c
}

// IsLocal reports whether a node was sampled on this machine (from /proc
// or its cgroup) rather than observed by another system.
func IsLocal(n results.NodeUsage) bool {
	return n.Source == "" || n.Source == "proc" || strings.HasPrefix(n.Source, "cgroup")
}

// unobservedWords names the tiers the run used but nothing observed
// ("the app tier at http://10.0.0.5:8080 is not observed").
func unobservedWords(us []results.Unobserved) string {
	var parts []string
	for _, u := range us {
		w := "the " + u.Tier + " tier"
		if u.At != "" {
			w += " at " + u.At
		}
		parts = append(parts, w)
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0] + " is not observed"
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + " are not observed"
}

// MarkRepeats shortens each phase verdict that repeats the whole run's:
// the run's line says it once, the phase says "as the whole run".
func MarkRepeats(t *results.Telemetry) {
	for i := range t.Phases {
		p := &t.Phases[i]
		same := p.Saturated != nil && t.Saturated != nil && p.Saturated.Tier == t.Saturated.Tier && p.Saturated.Node == t.Saturated.Node && p.Saturated.Resource == t.Saturated.Resource
		if same {
			if p.Saturated.Resource == "cpu" {
				p.Saturation = fmt.Sprintf("as the whole run (at the limit in %.0f%% of the phase's seconds)", 100*p.Saturated.Share)
			} else {
				p.Saturation = fmt.Sprintf("as the whole run (host mean %.2f cores)", p.HostCPUMean)
			}
			continue
		}
		if p.Saturated == nil && t.Saturated == nil && strings.HasPrefix(p.Saturation, "unknown:") && strings.HasPrefix(t.Saturation, "unknown:") {
			p.Saturation = "unknown, as the whole run"
		}
	}
}
