package memcached

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/scalelab/scalelab/engine"
)

var (
	_ engine.Cacher      = (*Conn)(nil)
	_ engine.CacheEngine = (*Engine)(nil)
)

// HasCache reports true: the engine's connections implement engine.Cacher
// (a cache tier, --cache memcached).
func (*Engine) HasCache() bool { return true }

// MaxTTL is the longest expiry memcached takes as a time from now: a
// larger number is read as an absolute Unix time, so KV.Set refuses it.
const MaxTTL = 30 * 24 * time.Hour

// ErrTTL is wrapped by the error of a KV.Set whose ttl is over MaxTTL
// (or negative).
var ErrTTL = fmt.Errorf("%w: memcached expires an item at most 30 days from now (a larger expiry is an absolute Unix time)", engine.ErrConfig)

// kv is a namespace of keys with expiry: each entry is one item at
// NAMESPACE:kv:namespace:GENERATION:key (hashed as the collections'
// keys are when memcached cannot take it as it is), the generation stored
// at NAMESPACE:kv:namespace:gen as a collection's is.
type kv struct {
	c      *Conn
	prefix string // NAMESPACE:kv:namespace:GENERATION
}

// KV returns the key-value cache of namespace: its current generation,
// or a new one with fresh (or when there is none yet). The entries of
// earlier generations can no longer be reached; memcached evicts them as
// it needs room.
func (c *Conn) KV(ctx context.Context, namespace string, fresh bool) (engine.KV, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !validNamespace.MatchString(namespace) {
		return nil, fmt.Errorf("%w: key-value namespace %q: want 1 to 40 letters, digits, '_', '.' or '-'", ErrConfig, namespace)
	}
	base := c.opts.Namespace + ":kv:" + namespace + ":"
	gen, err := c.generation(base+"gen", fresh)
	if err != nil {
		return nil, fmt.Errorf("memcached kv %s: %w", namespace, err)
	}
	return &kv{c: c, prefix: base + gen}, nil
}

// expiration is memcached's expiry of ttl: whole seconds, rounded up
// (0: never). A ttl over MaxTTL, or negative, fails with ErrTTL.
func expiration(ttl time.Duration) (int32, error) {
	if ttl < 0 || ttl > MaxTTL {
		return 0, fmt.Errorf("ttl %s: %w", ttl, ErrTTL)
	}
	return int32((ttl + time.Second - 1) / time.Second), nil
}

// Get returns key's value, or an error wrapping engine.ErrNotFound.
func (k *kv) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	it, err := k.c.mc.Get(itemKey(k.prefix, key))
	if errors.Is(err, memcache.ErrCacheMiss) {
		return nil, fmt.Errorf("memcached kv get %s: %w", key, engine.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("memcached kv get %s: %w", key, wrap(err))
	}
	return it.Value, nil
}

// Set stores value under key (set); ttl > 0 expires it after ttl rounded
// up to whole seconds; a ttl over 30 days fails with ErrTTL.
func (k *kv) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	exp, err := expiration(ttl)
	if err != nil {
		return fmt.Errorf("memcached kv set %s: %w", key, err)
	}
	if err := k.c.mc.Set(&memcache.Item{Key: itemKey(k.prefix, key), Value: value, Expiration: exp}); err != nil {
		return fmt.Errorf("memcached kv set %s: %w", key, wrap(err))
	}
	return nil
}

// Delete drops key (delete); a key that is not there is no error.
func (k *kv) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := k.c.mc.Delete(itemKey(k.prefix, key))
	if err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
		return fmt.Errorf("memcached kv delete %s: %w", key, wrap(err))
	}
	return nil
}
