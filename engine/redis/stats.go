package redis

import (
	"context"
	"fmt"
	"strconv"

	"github.com/scalelab/scalelab/engine"
)

var _ engine.StatsSampler = (*Conn)(nil)

// sampled are the INFO fields SampleStats reports: counters (commands,
// connections, keyspace hits and misses, evictions, rejected connections)
// and gauges (clients, memory).
var sampled = []string{
	"total_commands_processed", "total_connections_received", "rejected_connections", "keyspace_hits", "keyspace_misses",
	"evicted_keys", "expired_keys", "total_net_input_bytes", "total_net_output_bytes",
	"connected_clients", "blocked_clients", "used_memory", "used_memory_rss", "mem_fragmentation_ratio",
	"used_cpu_sys", "used_cpu_user",
}

// SampleStats reports the server's INFO figures as "redis.NAME"
// ("redis.total_commands_processed", "redis.used_memory", ...).
func (c *Conn) SampleStats(ctx context.Context) (map[string]float64, error) {
	fields, err := c.serverInfo(ctx, "stats", "clients", "memory", "cpu")
	if err != nil {
		return nil, fmt.Errorf("sample redis stats: %w", err)
	}
	out := make(map[string]float64, len(sampled))
	for _, k := range sampled {
		if v, err := strconv.ParseFloat(fields[k], 64); err == nil {
			out["redis."+k] = v
		}
	}
	return out, nil
}
