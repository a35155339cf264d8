package cache

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/scalelab/scalelab/engine"
)

// Event is what the cache did for one operation.
type Event struct {
	Hit, Miss, Stale bool
	// Error: the cache failed the read and the store answered it
	// (cache.on_error=store); neither a hit nor a miss.
	Error bool
	// Cache and Store are the time spent in the cache's and the store's
	// calls, CacheCalls and StoreCalls how many there were.
	Cache, Store           time.Duration
	CacheCalls, StoreCalls int
}

// Stats counts what a cache did, per operation and per wall-clock
// second. It is safe for concurrent use.
type Stats struct {
	mu   sync.Mutex
	ops  map[string]*opStats
	secs map[int64]*counts
}

type opStats struct {
	counts
	cache, store           time.Duration
	cacheCalls, storeCalls int64
}

// counts are an operation's or a second's reads through the cache: hits,
// misses, stale reads, and calls to the cache that failed.
type counts struct{ hits, misses, stale, errors int64 }

// add counts e.
func (c *counts) add(e Event) {
	if e.Hit {
		c.hits++
	}
	if e.Miss {
		c.misses++
	}
	if e.Stale {
		c.stale++
	}
	if e.Error {
		c.errors++
	}
}

// NewStats returns empty stats.
func NewStats() *Stats {
	return &Stats{ops: map[string]*opStats{}, secs: map[int64]*counts{}}
}

// Record counts e for op at the current second.
func (s *Stats) Record(op string, e Event) { s.RecordAt(time.Now(), op, e) }

// RecordAt counts e for op at t.
func (s *Stats) RecordAt(t time.Time, op string, e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.ops[op]
	if !ok {
		o = &opStats{}
		s.ops[op] = o
	}
	sec, ok := s.secs[t.Unix()]
	if !ok {
		sec = &counts{}
		s.secs[t.Unix()] = sec
	}
	o.add(e)
	sec.add(e)
	o.cache += e.Cache
	o.store += e.Store
	o.cacheCalls += int64(e.CacheCalls)
	o.storeCalls += int64(e.StoreCalls)
}

// Totals returns the hits, misses and stale reads of every operation.
func (s *Stats) Totals() (hits, misses, stale int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.ops {
		hits, misses, stale = hits+o.hits, misses+o.misses, stale+o.stale
	}
	return hits, misses, stale
}

func rate(hits, misses int64) float64 {
	if hits+misses == 0 {
		return 0
	}
	return float64(hits) / float64(hits+misses)
}

func meanMs(d time.Duration, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(d) / float64(n) / 1e6
}

// Report is the stats for run.json's scenario report ("cache"): totals,
// by operation (with the mean milliseconds of a cache and of a store
// call) and per second (Unix seconds). engine is the cache tier's engine
// ("" for a local cache).
func (s *Stats) Report(mode Mode, engine string) map[string]any {
	hits, misses, stale := s.Totals()
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs int64
	by := map[string]any{}
	for op, o := range s.ops {
		by[op] = map[string]any{"hits": o.hits, "misses": o.misses, "hit_rate": rate(o.hits, o.misses), "stale_reads": o.stale, "cache_errors": o.errors,
			"cache_ms": meanMs(o.cache, o.cacheCalls), "store_ms": meanMs(o.store, o.storeCalls),
			"cache_calls": o.cacheCalls, "store_calls": o.storeCalls}
		errs += o.errors
	}
	keys := slices.Sorted(maps.Keys(s.secs))
	per := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		sec := s.secs[k]
		per = append(per, map[string]any{"unix": k, "hits": sec.hits, "misses": sec.misses, "stale_reads": sec.stale, "cache_errors": sec.errors})
	}
	return map[string]any{"mode": string(mode), "engine": engine, "hits": hits, "misses": misses, "hit_rate": rate(hits, misses),
		"stale_reads": stale, "cache_errors": errs, "by_operation": by, "per_second": per,
		"note": "a hit is a read the cache answered, a miss one the store answered (and the cache was filled); a cache error a read the cache failed and the store answered (cache.on_error=store); a stale read returned a value older than the session's own acknowledged write; cache_ms and store_ms are the mean time of one cache and one store call"}
}

// Missed records in e what a cache read that did not hit means under
// policy onError (OnErrorStore or OnErrorFail), getErr being the cache's
// error. A not-found is a miss; any other error is a cache error, which
// fails the operation under OnErrorFail (the error returned) and
// otherwise sends the read to the store. fill reports whether the
// store's answer may be put in the cache: never after a cache error, so
// a cache coming back is not filled from a read that bypassed it.
func Missed(getErr error, onError string, e *Event) (fill bool, err error) {
	if !errors.Is(getErr, engine.ErrNotFound) {
		if onError == OnErrorFail {
			return false, fmt.Errorf("cache: %w", getErr)
		}
		e.Error = true
		return false, nil
	}
	e.Miss = true
	return true, nil
}
