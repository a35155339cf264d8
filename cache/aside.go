package cache

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/scalelab/scalelab/engine"
)

// Aside is cache-aside in front of a store, the steps every cached
// scenario takes written once: a read tries the cache, a miss reads the
// store and fills the cache (cache.ttl), a failing cache is bypassed or
// fails the read (cache.on_error); a write, once the store acknowledged
// it, drops the key (cache.write=invalidate) or stores the new entry
// (through). It times every cache and store call into the operation's
// Event, counts what the writes did, and reports it all for run.json.
// It is safe for concurrent use; an Event belongs to one session.
type Aside struct {
	Opened // where the cache is and its policy
	Stats  *Stats
	// StaleChecked says in the report whether the scenario checks its
	// reads for staleness (Event.Stale).
	StaleChecked bool
	// AfterStoreRead, when set (tests), runs between a miss's store read
	// and its fill of the cache.
	AfterStoreRead func()

	fillErrors, invalidations, invalidateErrors, throughSets, throughErrors atomic.Int64
}

// NewAside returns cache-aside over o, with empty stats.
func NewAside(o *Opened, staleChecked bool) *Aside {
	return &Aside{Opened: *o, Stats: NewStats(), StaleChecked: staleChecked}
}

// Through reports whether writes store their new entry in the cache
// (cache.write=through) rather than drop it.
func (a *Aside) Through() bool { return a.Write == WriteThrough }

// TimeStore runs fn, a call of the store, adding its time to e.
func (e *Event) TimeStore(fn func() error) error {
	t := time.Now()
	err := fn()
	e.Store += time.Since(t)
	e.StoreCalls++
	return err
}

func (e *Event) cacheCall(t time.Time) {
	e.Cache += time.Since(t)
	e.CacheCalls++
}

// Get returns key's entry, timed into e.
func (a *Aside) Get(ctx context.Context, key string, e *Event) ([]byte, error) {
	t := time.Now()
	b, err := a.KV.Get(ctx, key)
	e.cacheCall(t)
	return b, err
}

// set stores b under key, timed into e.
func (a *Aside) set(ctx context.Context, key string, b []byte, e *Event) error {
	t := time.Now()
	err := a.KV.Set(ctx, key, b, a.TTL)
	e.cacheCall(t)
	return err
}

// Read reads key through the cache. A hit hands the entry to decode; a
// decode error wrapping engine.ErrNotFound makes it a miss, any other
// fails the read. A miss (or a cache error under cache.on_error=store)
// calls load, which reads the store (time it with e.TimeStore) and
// returns the entry to fill, and whole false when the store's answer is
// not one to cache (then Read returns whole false at once). The fill is
// skipped after a cache error, so a cache coming back is not filled from
// a read that bypassed it; a failed fill is counted, not returned.
func (a *Aside) Read(ctx context.Context, key string, e *Event, decode func([]byte) error, load func() (entry []byte, whole bool, err error)) (whole bool, err error) {
	b, err := a.Get(ctx, key, e)
	if err == nil {
		if err = decode(b); err == nil {
			e.Hit = true
			return true, nil
		}
		if !errors.Is(err, engine.ErrNotFound) {
			return false, fmt.Errorf("cache: %w", err)
		}
	}
	fill, err := Missed(err, a.OnError, e)
	if err != nil {
		return false, err
	}
	entry, whole, err := load()
	if err != nil || !whole {
		return false, err
	}
	if a.AfterStoreRead != nil {
		a.AfterStoreRead()
	}
	if fill {
		a.Fill(ctx, key, entry, e)
	}
	return true, nil
}

// Fill stores entry under key after a read; a failure is counted.
func (a *Aside) Fill(ctx context.Context, key string, entry []byte, e *Event) {
	if err := a.set(ctx, key, entry, e); err != nil {
		a.fillErrors.Add(1)
	}
}

// Invalidate drops key after a write; a failure is counted and
// returned.
func (a *Aside) Invalidate(ctx context.Context, key string, e *Event) error {
	a.invalidations.Add(1)
	t := time.Now()
	err := a.KV.Delete(ctx, key)
	e.cacheCall(t)
	if err != nil {
		a.invalidateErrors.Add(1)
	}
	return err
}

// Cached reads the entry a write-through changes: the entry of key,
// handed to decode. It reports false when the cache holds none (there is
// nothing to change: the next read fills it) or failed (counted as a
// through error).
func (a *Aside) Cached(ctx context.Context, key string, e *Event, decode func([]byte) error) bool {
	b, err := a.Get(ctx, key, e)
	if err == nil {
		err = decode(b)
	}
	if err != nil {
		if !errors.Is(err, engine.ErrNotFound) {
			a.throughErrors.Add(1)
		}
		return false
	}
	return true
}

// Store stores entry, the value a write left, under key (write-through);
// a failure is counted and returned.
func (a *Aside) Store(ctx context.Context, key string, entry []byte, e *Event) error {
	a.throughSets.Add(1)
	err := a.set(ctx, key, entry, e)
	if err != nil {
		a.throughErrors.Add(1)
	}
	return err
}

// Report is the cache's figures for run.json's scenario report: the
// Stats' (Stats.Report), the policy, the writes' counters and the local
// cache's usage.
func (a *Aside) Report() map[string]any {
	r := a.Stats.Report(a.Mode, a.Engine)
	r["write_policy"] = a.Write
	r["ttl"] = a.TTL.String()
	r["invalidations"] = a.invalidations.Load()
	r["fill_errors"] = a.fillErrors.Load()
	r["invalidate_errors"] = a.invalidateErrors.Load()
	r["through_sets"] = a.throughSets.Load()
	r["through_errors"] = a.throughErrors.Load()
	r["stale_checked"] = a.StaleChecked
	if a.LRU != nil {
		entries, bytes, evictions := a.LRU.Usage()
		r["local_size"] = a.LocalSize
		r["local_entries"] = entries
		r["local_bytes"] = bytes
		r["local_evictions"] = evictions
	}
	return r
}
