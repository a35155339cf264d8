package kit

import (
	"context"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/scenario"
)

// OpenCache opens the cache env's settings ask for (package cache; nil
// with cache.mode off): a local LRU, or namespace in the run's cache
// tier. A shared cache starts empty, except for the segments of a divided
// test. A tier that is no key-value cache is refused wrapping
// scenario.ErrEngineNotSupported; scen names the scenario in errors.
func OpenCache(ctx context.Context, env scenario.Env, scen, namespace string) (*cache.Opened, error) {
	p := cache.Place{Settings: env.Settings, Fresh: !env.Segment.Split(), Scenario: scen, Namespace: namespace,
		Unsupported: scenario.ErrEngineNotSupported}
	if t, ok := env.Tier(scenario.RoleCache); ok {
		p.Tier, p.TierEngine = t.Conn, t.Engine
	}
	return cache.OpenFor(ctx, p)
}

// VersionedCache is a scenario's cache-aside (cache.Aside: where it is,
// its policy, what it did) and, when it checks stale reads, the counter of
// the versions its writes stamp into what they store: it hands them out
// and knows the floor, the highest version such that it and every one
// below have ended (Last). Versions is nil without the check.
type VersionedCache struct {
	*cache.Aside
	Versions *AckCounter
}

// OpenVersionedCache opens the cache env's settings ask for (OpenCache;
// nil with cache.mode off) as a VersionedCache; staleChecked says whether
// the scenario checks stale reads.
func OpenVersionedCache(ctx context.Context, env scenario.Env, scen, namespace string, staleChecked bool) (*VersionedCache, error) {
	o, err := OpenCache(ctx, env, scen, namespace)
	if err != nil || o == nil {
		return nil, err
	}
	c := &VersionedCache{Aside: cache.NewAside(o, staleChecked)}
	if staleChecked {
		c.Versions = NewAckCounter(1)
	}
	return c, nil
}

// Remember sets m[k] to v, making the map on first use; a new key when m
// already holds limit keys makes it forget one other, any: how a session
// keeps its last acknowledged write of the keys it wrote most recently,
// to tell a stale read from the cache.
func Remember[K comparable, V any](m *map[K]V, k K, v V, limit int) {
	if *m == nil {
		*m = make(map[K]V)
	}
	if _, ok := (*m)[k]; !ok && len(*m) >= limit {
		for old := range *m {
			delete(*m, old)
			break
		}
	}
	(*m)[k] = v
}
