package runner

import (
	"strconv"
	"time"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/telemetry"
)

// telemetryNodes lists the processes of the run's local clusters: the
// store's nodes (tier "store"), the app cluster's servers (tier "app") and
// balancer (tier "balancer"), and every other tier's, by role.
func (p *Plan) telemetryNodes() []telemetry.Node {
	var out []telemetry.Node
	add := func(tier string, st *cluster.State) {
		if st == nil {
			return
		}
		for _, n := range st.Nodes {
			name, clusterName := n.Name, st.Name
			nodeTier := tier
			if n.Role == apptier.RoleBalancer {
				nodeTier = apptier.RoleBalancer
			}
			tn := telemetry.Node{Tier: nodeTier, Name: name, Role: n.Role, PID: n.PID, Cgroup: n.Cgroup,
				Refresh: func() int { return currentPID(clusterName, name) }}
			if st.Limits != nil && !st.Limits.IsZero() {
				tn.Limits = &results.Limits{CPUs: st.Limits.CPUs, MemoryBytes: st.Limits.MemoryBytes, CPUSet: st.Limits.CPUSet, Cgroup: st.LimitsCgroup}
			}
			// an app server runs at most GOMAXPROCS (--opt procs) threads
			// of Go code at once: that is its CPU limit when lower
			if procs, _ := strconv.Atoi(st.Params[apptier.OptProcs]); n.Role == apptier.RoleServer && procs > 0 {
				if tn.Limits == nil {
					tn.Limits = &results.Limits{}
				}
				if tn.Limits.CPUs == 0 || float64(procs) < tn.Limits.CPUs {
					tn.Limits.CPUs = float64(procs)
				}
			}
			out = append(out, tn)
		}
	}
	add(scenario.RoleStore, p.cluster)
	add(scenario.RoleApp, p.app)
	for _, t := range p.tiers {
		add(t.role, t.cluster)
	}
	return out
}

// currentPID reads a node's PID from its cluster's state now (a restart
// fault gives it a new one).
func currentPID(clusterName, node string) int {
	st, err := cluster.Load(clusterName)
	if err != nil {
		return 0
	}
	for _, n := range st.Nodes {
		if n.Name == node && cluster.Alive(n.PID) {
			return n.PID
		}
	}
	return 0
}

// telemetrySources are the connections whose servers report stats.
func telemetrySources(store engine.Conn, tiers map[string]scenario.Tier) []telemetry.Source {
	var out []telemetry.Source
	if s, ok := store.(engine.StatsSampler); ok {
		out = append(out, telemetry.Source{Tier: scenario.RoleStore, Sampler: s})
	}
	for role, t := range tiers {
		if s, ok := t.Conn.(engine.StatsSampler); ok {
			out = append(out, telemetry.Source{Tier: role, Sampler: s})
		}
	}
	return out
}

// telemetryInterval is --telemetry, or by default every second, and for a
// run shorter than 10 s a tenth of it (at least 100 ms), so that a short
// run still has samples to judge.
func (p *Plan) telemetryInterval() time.Duration {
	if p.flags.Telemetry > 0 {
		return p.flags.Telemetry
	}
	if d := p.opts.Duration; d > 0 && d < 10*time.Second {
		return max(100*time.Millisecond, d/10)
	}
	return time.Second
}
