// Package cache is the caching in front of a store that scenarios share:
// where entries live (a bounded in-process LRU per process, or a shared
// cache tier such as Redis or memcached through engine.KV), the settings
// that choose it, and what it did (hits, misses, stale reads, time in the
// cache and in the store, per operation and per second) for run.json.
package cache

import (
	"context"
	"fmt"
	"strings"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/lru"
	"github.com/scalelab/scalelab/setting"
)

// Mode is where a scenario caches.
type Mode string

// Modes.
const (
	Off    Mode = "off"    // no cache: every read goes to the store
	Local  Mode = "local"  // a bounded LRU in each process (each app server's own)
	Shared Mode = "shared" // the cache tier (--cache ENGINE, --cache-cluster NAME)
)

// Setting keys; a scenario declares the ones it honours.
const (
	KeyMode      = "cache.mode"
	KeyLocalSize = "cache.local_size"
	KeyTTL       = "cache.ttl"
	KeyWrite     = "cache.write"
	KeySearchTTL = "cache.search_ttl"
	KeyOnError   = "cache.on_error"
)

// What a read does when the cache fails (cache.on_error).
const (
	OnErrorStore = "store" // the store answers; the cache's failure is counted
	OnErrorFail  = "fail"  // the operation fails with the cache's error
)

// Write policies (cache.write).
const (
	WriteInvalidate = "invalidate" // a write drops the key; the next read fills it
	WriteThrough    = "through"    // a write stores the new value in the cache too
)

// SpecMode is the cache.mode setting.
func SpecMode() setting.Spec {
	return setting.Spec{Key: KeyMode, Kind: setting.Enum, Default: "auto", Allowed: []string{"auto", string(Off), string(Local), string(Shared)},
		Description: "where reads are cached: off; local (a bounded LRU in each process, cache.local_size); shared (the cache tier: --cache ENGINE or --cache-cluster NAME); auto: shared with a cache tier, off without"}
}

// SpecLocalSize is the cache.local_size setting.
func SpecLocalSize() setting.Spec {
	return setting.Spec{Key: KeyLocalSize, Kind: setting.Int, Default: "33554432", Min: 1024, Max: 1 << 40,
		Description: "bytes of the local cache of each process (cache.mode=local); least recently used entries go first"}
}

// SpecTTL is the cache.ttl setting.
func SpecTTL() setting.Spec {
	return setting.Spec{Key: KeyTTL, Kind: setting.Duration, Default: "0s", Min: 0, Max: 30 * 86400,
		Description: "how long a cached entry lives (0: until evicted or invalidated)"}
}

// SpecWrite is the cache.write setting.
func SpecWrite() setting.Spec {
	return setting.Spec{Key: KeyWrite, Kind: setting.Enum, Default: WriteInvalidate, Allowed: []string{WriteInvalidate, WriteThrough},
		Description: "what a write does to the cache: invalidate (drop the key; the next read fills it) or through (store the new value in the cache after the store)"}
}

// SpecOnError is the cache.on_error setting.
func SpecOnError() setting.Spec {
	return setting.Spec{Key: KeyOnError, Kind: setting.Enum, Default: OnErrorStore, Allowed: []string{OnErrorStore, OnErrorFail},
		Description: "what a read does when the cache fails (down, timed out): store (read the store instead, as an application that treats its cache as optional; counted as a cache error, and the cache is not filled) or fail (the operation fails with the cache's error class)"}
}

// SpecSearchTTL is the cache.search_ttl setting.
func SpecSearchTTL() setting.Spec {
	return setting.Spec{Key: KeySearchTTL, Kind: setting.Duration, Default: "0s", Min: 0, Max: 30 * 86400,
		Description: "how long search results are cached (0: not cached; the study used 5m)"}
}

// ModeOf reads cache.mode: auto is shared when the run has a cache tier
// and off when it has none. shared without a tier is an error.
func ModeOf(set *setting.Set, haveTier bool) (Mode, error) {
	m := Mode(set.Get(KeyMode).String())
	switch {
	case m == "auto" && haveTier:
		return Shared, nil
	case m == "auto":
		return Off, nil
	case m == Shared && !haveTier:
		return "", fmt.Errorf("%w: %s=shared needs a cache tier: --cache-cluster NAME (a redis or memcached cluster from 'scalelab cluster up'), or --cache ENGINE --cache-target TARGET", setting.ErrBadValue, KeyMode)
	}
	return m, nil
}

// Config says how to open a cache.
type Config struct {
	Mode      Mode
	LocalSize int64       // bytes, for Local
	Tier      engine.Conn // the cache tier's connection, for Shared
	Engine    string      // the cache tier's engine name, for errors
	Namespace string      // the scenario's namespace in a shared cache
	Fresh     bool        // start the shared namespace empty
}

// Open returns the cache of cfg, or nil with Mode Off.
func Open(ctx context.Context, cfg Config) (engine.KV, error) {
	switch cfg.Mode {
	case Off, "":
		return nil, nil
	case Local:
		return lru.New(cfg.LocalSize, engine.ErrNotFound), nil
	case Shared:
		c, ok := cfg.Tier.(engine.Cacher)
		if !ok {
			return nil, fmt.Errorf("%w: the cache tier's engine %s is no key-value cache (use %s)", engine.ErrConfig, cfg.Engine, strings.Join(engine.WithCache(), " or "))
		}
		kv, err := c.KV(ctx, cfg.Namespace, cfg.Fresh)
		if err != nil {
			return nil, fmt.Errorf("open the shared cache (%s): %w", cfg.Engine, err)
		}
		return kv, nil
	}
	return nil, fmt.Errorf("%w: %s=%s", setting.ErrBadValue, KeyMode, cfg.Mode)
}

// the local cache is a key-value store of the engine contract
var _ engine.KV = (*lru.Cache)(nil)
