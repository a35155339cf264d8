package cache

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/lru"
	"github.com/scalelab/scalelab/setting"
)

// DirectSpecs are the settings of a scenario that caches its store's
// records in its own process or the cache tier (direct mode): mode, local
// size, TTL, write policy and what a failed read does.
func DirectSpecs() []setting.Spec {
	return []setting.Spec{SpecMode(), SpecLocalSize(), SpecTTL(), SpecWrite(), SpecOnError()}
}

// Opened is a scenario's cache as its settings chose it.
type Opened struct {
	KV        engine.KV
	Mode      Mode
	Engine    string // the cache tier's engine; "" for a local cache
	Write     string // WriteInvalidate or WriteThrough
	OnError   string // OnErrorStore or OnErrorFail
	TTL       time.Duration
	LocalSize int64
	LRU       *lru.Cache // the local cache (for its usage); nil when shared
}

// Place is where and for whom a scenario's cache opens: the run's
// settings (which must declare DirectSpecs), its cache tier if it has
// one, and the scenario's names.
type Place struct {
	Settings   *setting.Set
	Tier       engine.Conn // the cache tier's connection; nil without one
	TierEngine string      // the cache tier's engine name
	// Fresh starts a shared namespace empty (false for the segments of a
	// divided test, which share what the --load-only run started).
	Fresh     bool
	Scenario  string // names the scenario in errors
	Namespace string // the scenario's namespace in a shared cache
	// Unsupported is what the refusal of a tier that is no key-value
	// cache wraps (the scenario layer's "engine not supported").
	Unsupported error
}

// OpenFor opens the cache p's settings ask for (nil with cache.mode off):
// a local LRU, or p.Namespace in the cache tier.
func OpenFor(ctx context.Context, p Place) (*Opened, error) {
	set := p.Settings
	mode, err := ModeOf(set, p.Tier != nil)
	if err != nil || mode == Off {
		return nil, err
	}
	o := &Opened{Mode: mode, Write: set.Get(KeyWrite).String(), TTL: set.Get(KeyTTL).Duration(),
		LocalSize: set.Get(KeyLocalSize).Int(), OnError: set.Get(KeyOnError).String()}
	cfg := Config{Mode: mode, LocalSize: o.LocalSize, Namespace: p.Namespace}
	if mode == Shared {
		if _, ok := p.Tier.(engine.Cacher); !ok {
			return nil, fmt.Errorf("%s: the cache tier's engine %s is no key-value cache: %w; use --cache %s, or --set %s=local for a cache in this process",
				p.Scenario, p.TierEngine, p.Unsupported, strings.Join(engine.WithCache(), " or "), KeyMode)
		}
		o.Engine = p.TierEngine
		cfg.Tier, cfg.Engine, cfg.Fresh = p.Tier, p.TierEngine, p.Fresh
	}
	if o.KV, err = Open(ctx, cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", p.Scenario, err)
	}
	o.LRU, _ = o.KV.(*lru.Cache)
	return o, nil
}
