// Package lru is a bounded key-value cache in this process: least
// recently used entries go first. It serves as the local cache of a
// scenario (package cache) and as the memory engine's key-value cache. It
// imports nothing of scalelab's: its users give it the error a miss wraps
// (c.miss), and its methods are those of engine.KV.
package lru

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// entryOverhead is what an entry costs beside its key and value (the
// list element, the map slot, the entry itself), counted against the
// local cache's size.
const entryOverhead = 96

// Cache is a cache in this process: least recently used entries go when
// the entries' bytes would pass the limit. It is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	max     int64
	used    int64
	lru     *list.List // front: most recently used
	entries map[string]*list.Element
	evicted int64
	miss    error // what a miss wraps
}

type localEntry struct {
	key     string
	value   []byte
	expires time.Time // zero: never
}

// New returns an empty cache of maxBytes whose misses (an absent or an
// expired key) wrap miss.
func New(maxBytes int64, miss error) *Cache {
	return &Cache{max: maxBytes, lru: list.New(), entries: map[string]*list.Element{}, miss: miss}
}

func size(e *localEntry) int64 { return int64(len(e.key)+len(e.value)) + entryOverhead }

// Get returns key's value (a copy), or an error wrapping the miss error.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, fmt.Errorf("local cache %q: %w", key, c.miss)
	}
	e := el.Value.(*localEntry)
	if !e.expires.IsZero() && time.Now().After(e.expires) {
		c.remove(el)
		return nil, fmt.Errorf("local cache %q: expired: %w", key, c.miss)
	}
	c.lru.MoveToFront(el)
	return append([]byte(nil), e.value...), nil
}

// Set stores a copy of value; an entry larger than the whole cache is not
// kept.
func (c *Cache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e := &localEntry{key: key, value: append([]byte(nil), value...)}
	if ttl > 0 {
		e.expires = time.Now().Add(ttl)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	if size(e) > c.max {
		return nil
	}
	for c.used+size(e) > c.max {
		c.remove(c.lru.Back())
		c.evicted++
	}
	c.entries[key] = c.lru.PushFront(e)
	c.used += size(e)
	return nil
}

// Delete drops key.
func (c *Cache) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	return nil
}

func (c *Cache) remove(el *list.Element) {
	e := el.Value.(*localEntry)
	c.lru.Remove(el)
	delete(c.entries, e.key)
	c.used -= size(e)
}

// Usage reports the entries held, their bytes and the evictions so far.
func (c *Cache) Usage() (entries int, bytes, evictions int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.used, c.evicted
}
