package engine

import (
	"context"
	"time"
)

// Cacher is an optional capability of a Conn: a key-value cache with
// expiry, as a cache tier in front of a store uses it (Redis, memcached).
type Cacher interface {
	// KV returns the cache's keys under namespace. fresh starts the
	// namespace empty (a new generation: what earlier users of the
	// namespace stored is no longer seen); otherwise KV sees what is
	// there, so that several app servers share one namespace.
	KV(ctx context.Context, namespace string, fresh bool) (KV, error)
}

// KV is a key-value cache. Keys are short printable strings (no spaces);
// an implementation maps longer or unusual keys to ones its server takes.
type KV interface {
	// Get returns key's value, or fails wrapping ErrNotFound when the
	// cache does not hold it (never stored, expired, evicted or deleted).
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value under key, replacing what is there; ttl > 0
	// expires it after ttl (servers with whole-second expiry round up).
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Delete drops key; a key that is not there is no error.
	Delete(ctx context.Context, key string) error
}

// CacheEngine is implemented by engines whose connections are Cachers,
// so that help and errors can name them without connecting.
type CacheEngine interface {
	HasCache() bool
}

// WithCache returns the names of the registered engines whose connections
// implement Cacher, sorted.
func WithCache() []string { return namesWith(CacheEngine.HasCache) }
