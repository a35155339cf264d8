package cassandra

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// statsPools are always reported; other pools only when they did work.
var statsPools = map[string]bool{"MutationStage": true, "ReadStage": true, "Native-Transport-Requests": true}

// SampleStats reports each node's thread pools from the virtual table
// system_views.thread_pools of Cassandra 5, asking every node for its own
// (virtual tables are node-local; each query is pinned to its host):
// "cass.<address>.<pool>.pending", ".active", ".blocked", ".blocked_total"
// and ".completed", for MutationStage, ReadStage and
// Native-Transport-Requests and for every other pool with work done or
// pending. Cassandra 5 has no virtual table of dropped messages.
func (c *Conn) SampleStats(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	var errs []error
	for _, h := range c.s.GetHosts() {
		if !h.IsUp() {
			continue
		}
		node := strings.NewReplacer(".", "_", ":", "_").Replace(h.ConnectAddress().String())
		it := c.s.Query(`SELECT name, active_tasks, pending_tasks, blocked_tasks, blocked_tasks_all_time, completed_tasks FROM system_views.thread_pools`).
			SetHostID(h.HostID()).IterContext(ctx)
		var name string
		var active, pending, blocked, blockedAll, completed int64
		for it.Scan(&name, &active, &pending, &blocked, &blockedAll, &completed) {
			if !statsPools[name] && completed == 0 && pending == 0 {
				continue
			}
			p := "cass." + node + "." + strings.ToLower(name) + "."
			out[p+"active"], out[p+"pending"], out[p+"blocked"] = float64(active), float64(pending), float64(blocked)
			out[p+"blocked_total"], out[p+"completed"] = float64(blockedAll), float64(completed)
		}
		if err := it.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", node, err))
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, fmt.Errorf("sample cassandra stats: %w", errors.Join(errs...))
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("sample cassandra stats: %w", errors.Join(errs...))
	}
	return out, nil
}
