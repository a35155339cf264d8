// Package throwawaycache is a cache tier that exists only in tests, to
// prove that a cache needs no scenario code: it registers itself as an
// engine whose connections are key-value caches (engine.Cacher), and
// nothing else; yet ycsb, social and mhealth read through it (package
// cache's Aside) with their hit rates and stale reads counted. It can
// lose its deletes (throwawaycache.lose_deletes), a cache whose
// invalidations never arrive, so that the stale-read checks have
// something to find.
package throwawaycache

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/setting"
)

// Name is the engine's registry name.
const Name = "throwawaycache"

// KeyLoseDeletes makes Delete do nothing.
const KeyLoseDeletes = Name + ".lose_deletes"

func init() { engine.Register(Engine{}) }

// Engine is the throwaway cache.
type Engine struct{}

var (
	_ engine.CacheEngine = Engine{}
	_ engine.Cacher      = (*Conn)(nil)
)

// Name returns "throwawaycache".
func (Engine) Name() string { return Name }

// Description is one line for `scalelab list`.
func (Engine) Description() string {
	return "a test-only cache tier proving that a cache needs no scenario code"
}

// Settings declares lose_deletes.
func (Engine) Settings() []setting.Spec {
	return []setting.Spec{{Key: KeyLoseDeletes, Kind: setting.Bool, Default: "false",
		Description: "drop no key on Delete (invalidations lost), so that readers see stale entries"}}
}

// HasCache reports true.
func (Engine) HasCache() bool { return true }

// Open returns a new, empty cache.
func (Engine) Open(_ context.Context, cfg engine.Config) (engine.Conn, error) {
	c := &Conn{spaces: map[string]*KV{}}
	if cfg.Settings != nil {
		c.loseDeletes = cfg.Settings.Get(KeyLoseDeletes).Bool()
	}
	return c, nil
}

// Conn is a connection to a throwaway cache: one map per namespace.
type Conn struct {
	mu          sync.Mutex
	spaces      map[string]*KV
	loseDeletes bool
}

// Info describes the cache.
func (c *Conn) Info(context.Context) (engine.Info, error) {
	return engine.Info{Engine: Name, Version: "n/a", Target: "in-process"}, nil
}

// Close does nothing.
func (c *Conn) Close() error { return nil }

// KV returns namespace's map, new when fresh.
func (c *Conn) KV(_ context.Context, namespace string, fresh bool) (engine.KV, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kv, ok := c.spaces[namespace]
	if !ok || fresh {
		kv = &KV{m: map[string]entry{}, loseDeletes: c.loseDeletes}
		c.spaces[namespace] = kv
	}
	return kv, nil
}

type entry struct {
	v       []byte
	expires time.Time
}

// KV is one namespace of the cache: an unbounded map with expiry.
type KV struct {
	mu          sync.Mutex
	m           map[string]entry
	loseDeletes bool
}

// Get returns a copy of key's value, or fails wrapping engine.ErrNotFound.
func (k *KV) Get(_ context.Context, key string) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.m[key]
	if !ok || (!e.expires.IsZero() && time.Now().After(e.expires)) {
		return nil, fmt.Errorf("throwaway cache %q: %w", key, engine.ErrNotFound)
	}
	return append([]byte(nil), e.v...), nil
}

// Set stores a copy of value.
func (k *KV) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	e := entry{v: append([]byte(nil), value...)}
	if ttl > 0 {
		e.expires = time.Now().Add(ttl)
	}
	k.mu.Lock()
	k.m[key] = e
	k.mu.Unlock()
	return nil
}

// Delete drops key, unless the cache loses its deletes.
func (k *KV) Delete(_ context.Context, key string) error {
	if k.loseDeletes {
		return nil
	}
	k.mu.Lock()
	delete(k.m, key)
	k.mu.Unlock()
	return nil
}
