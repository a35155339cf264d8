package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Health statuses, in the Elasticsearch sense, for every engine.
const (
	// Green: every node the cluster still has is in it and every copy of
	// the data it can place is in place (a cluster that lost a node is
	// green again once it has re-replicated onto the others).
	Green = "green"
	// Yellow: all data is served, but some copies are missing or behind
	// (unassigned replicas, a replica not streaming).
	Yellow = "yellow"
	// Red: some data is not served (a primary shard, the PostgreSQL
	// primary).
	Red = "red"
	// Unreachable: no node answered.
	Unreachable = "unreachable"
)

// Health is a cluster's health as its engine sees it.
type Health struct {
	Status string // Green, Yellow, Red or Unreachable
	Nodes  int    // nodes the cluster itself counts as members
	Of     int    // nodes in the cluster's state
	// Detail holds engine facts worth an event when they change (e.g.
	// "node2": "streaming", "unassigned_shards": "3"); keep it small and
	// free of fast-moving numbers.
	Detail map[string]string
}

// Healthy reports whether the status is green.
func (h Health) Healthy() bool { return h.Status == Green }

// String is "green, 3 of 3 nodes" plus the details in key order.
func (h Health) String() string {
	s := fmt.Sprintf("%s, %d of %d nodes", h.Status, h.Nodes, h.Of)
	keys := slices.Sorted(maps.Keys(h.Detail))
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+" "+h.Detail[k])
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// HealthChecker is an optional Provisioner capability: the engine's own
// view of the cluster's health (OpenSearch's _cluster/health, PostgreSQL's
// pg_stat_replication). It must return within a few seconds even when a
// node hangs (short per-request timeouts).
type HealthChecker interface {
	Health(ctx context.Context, st *State) (Health, error)
}

// CheckHealth asks the provisioner of st's engine for the cluster's health.
// Without a HealthChecker it knows only processes: green with the nodes
// whose process runs (a node that died is no longer counted, as an engine
// that re-replicated would), unreachable when none runs.
func CheckHealth(ctx context.Context, st *State) (Health, error) {
	if p, err := ProvisionerOf(st); err == nil {
		if hc, ok := p.(HealthChecker); ok {
			return hc.Health(ctx, st)
		}
	}
	h := Health{Status: Green, Of: len(st.Nodes)}
	for _, n := range st.Nodes {
		if Alive(n.PID) {
			h.Nodes++
		}
	}
	if h.Nodes == 0 {
		h.Status = Unreachable
	}
	return h, nil
}
