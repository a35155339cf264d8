package cache

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/scalelab/scalelab/cache/lru"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
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

// OpenFor opens the cache a run's settings ask for (nil with cache.mode
// off): a local LRU, or namespace in the run's cache tier. A shared
// cache starts empty, except for the segments of a divided test, which
// share what the --load-only run started. scen names the scenario in
// errors; a tier that is no key-value cache is refused wrapping
// scenario.ErrEngineNotSupported. The settings must declare DirectSpecs.
func OpenFor(ctx context.Context, env scenario.Env, scen, namespace string) (*Opened, error) {
	t, haveTier := env.Tier(scenario.RoleCache)
	mode, err := ModeOf(env.Settings, haveTier)
	if err != nil || mode == Off {
		return nil, err
	}
	o := &Opened{Mode: mode, Write: env.Settings.Get(KeyWrite).String(), TTL: env.Settings.Get(KeyTTL).Duration(),
		LocalSize: env.Settings.Get(KeyLocalSize).Int(), OnError: env.Settings.Get(KeyOnError).String()}
	cfg := Config{Mode: mode, LocalSize: o.LocalSize, Namespace: namespace}
	if mode == Shared {
		if _, ok := t.Conn.(engine.Cacher); !ok {
			return nil, fmt.Errorf("%s: the cache tier's engine %s is no key-value cache: %w; use --cache %s, or --set %s=local for a cache in this process",
				scen, t.Engine, scenario.ErrEngineNotSupported, strings.Join(engine.WithCache(), " or "), KeyMode)
		}
		o.Engine = t.Engine
		cfg.Tier, cfg.Engine, cfg.Fresh = t.Conn, t.Engine, !env.Segment.Split()
	}
	if o.KV, err = Open(ctx, cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", scen, err)
	}
	o.LRU, _ = o.KV.(*lru.Cache)
	return o, nil
}
