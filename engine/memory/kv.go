package memory

import (
	"context"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/lru"
)

// kvSize bounds each namespace of the memory engine's key-value cache.
const kvSize = 1 << 30

var (
	_ engine.Cacher      = (*Conn)(nil)
	_ engine.CacheEngine = (*Engine)(nil)
)

// HasCache reports true: the engine's connections are key-value caches
// (an LRU in this process per namespace), a cache tier for tests and
// for comparing a store with an ideal cache.
func (*Engine) HasCache() bool { return true }

// KV returns the namespace's cache: an LRU of up to 1 GiB in this
// process, new when fresh. It injects no faults.
func (c *Conn) KV(ctx context.Context, namespace string, fresh bool) (engine.KV, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.kvMu.Lock()
	defer c.kvMu.Unlock()
	if c.kvs == nil {
		c.kvs = map[string]*lru.Cache{}
	}
	l, ok := c.kvs[namespace]
	if !ok || fresh {
		l = lru.New(kvSize, engine.ErrNotFound)
		c.kvs[namespace] = l
	}
	return l, nil
}
