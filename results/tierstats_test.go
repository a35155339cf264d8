package results

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// TestNewTierStats: the delta is after minus before for the names in both
// samples; a missing sample leaves no delta; values JSON cannot hold are
// dropped so that run.json still encodes.
func TestNewTierStats(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		before, after map[string]float64
		want          *TierStats
	}{
		{"both", map[string]float64{"redis.keyspace_hits": 100, "redis.used_memory": 5000, "redis.only_before": 1},
			map[string]float64{"redis.keyspace_hits": 1100, "redis.used_memory": 4000, "redis.only_after": 2},
			&TierStats{Before: map[string]float64{"redis.keyspace_hits": 100, "redis.used_memory": 5000, "redis.only_before": 1},
				After: map[string]float64{"redis.keyspace_hits": 1100, "redis.used_memory": 4000, "redis.only_after": 2},
				Delta: map[string]float64{"redis.keyspace_hits": 1000, "redis.used_memory": -1000}}},
		{"before failed", nil, map[string]float64{"memcached.evictions": 3},
			&TierStats{After: map[string]float64{"memcached.evictions": 3}}},
		{"after failed", map[string]float64{"memcached.evictions": 3}, nil,
			&TierStats{Before: map[string]float64{"memcached.evictions": 3}}},
		{"not finite", map[string]float64{"a": math.NaN(), "b": 1}, map[string]float64{"a": 2, "b": math.Inf(1)},
			&TierStats{Before: map[string]float64{"b": 1}, After: map[string]float64{"a": 2}}},
		{"nothing", nil, map[string]float64{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := NewTierStats(c.before, c.after)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if _, err := json.Marshal(Tier{Role: "cache", Stats: got}); err != nil {
				t.Errorf("encode: %v", err)
			}
		})
	}
}
