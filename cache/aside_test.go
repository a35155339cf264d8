package cache

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/lru"
)

var errDown = errors.New("cache down")

// downKV is a cache that fails every call.
type downKV struct{}

func (downKV) Get(context.Context, string) ([]byte, error)              { return nil, errDown }
func (downKV) Set(context.Context, string, []byte, time.Duration) error { return errDown }
func (downKV) Delete(context.Context, string) error                     { return errDown }

func newTestAside(kv engine.KV, write, onError string) *Aside {
	l, _ := kv.(*lru.Cache)
	return NewAside(&Opened{KV: kv, Mode: Local, Write: write, OnError: onError, LRU: l, LocalSize: 1 << 20}, true)
}

// read reads key through a with a store that answers value (whole) and
// counts its calls.
func read(t *testing.T, a *Aside, key, value string, whole bool, storeCalls *int) (got string, e Event, err error) {
	t.Helper()
	_, err = a.Read(context.Background(), key, &e, func(b []byte) error {
		if string(b) == "undecodable" {
			return fmt.Errorf("%w: entry of a former layout", engine.ErrNotFound)
		}
		if string(b) == "corrupt" {
			return fmt.Errorf("%w: cut short", engine.ErrIntegrity)
		}
		got = string(b)
		return nil
	}, func() ([]byte, bool, error) {
		*storeCalls++
		err := e.TimeStore(func() error { return nil })
		got = value
		return []byte(value), whole, err
	})
	return got, e, err
}

// TestAsideReadThrough: a miss reads the store and fills the cache, the
// next read is a hit; an entry that decodes as not found is a miss, a
// corrupt one fails the read; a store answer that is not whole is not
// cached.
func TestAsideReadThrough(t *testing.T) {
	a := newTestAside(lru.New(1<<20, engine.ErrNotFound), WriteInvalidate, OnErrorStore)
	n := 0
	got, e, err := read(t, a, "k", "v1", true, &n)
	if err != nil || got != "v1" || !e.Miss || e.Hit || n != 1 || e.StoreCalls != 1 || e.CacheCalls != 2 {
		t.Fatalf("first read: %q %+v %v, store calls %d", got, e, err, n)
	}
	got, e, err = read(t, a, "k", "v2", true, &n)
	if err != nil || got != "v1" || !e.Hit || n != 1 || e.CacheCalls != 1 {
		t.Fatalf("second read: %q %+v %v, store calls %d", got, e, err, n)
	}
	ctx := context.Background()
	if err := a.KV.Set(ctx, "k", []byte("undecodable"), 0); err != nil {
		t.Fatal(err)
	}
	if got, e, err = read(t, a, "k", "v3", true, &n); err != nil || got != "v3" || !e.Miss {
		t.Fatalf("undecodable entry: %q %+v %v", got, e, err)
	}
	if err := a.KV.Set(ctx, "k", []byte("corrupt"), 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err = read(t, a, "k", "v4", true, &n); !errors.Is(err, engine.ErrIntegrity) {
		t.Fatalf("corrupt entry: %v, want an integrity error", err)
	}
	filled := 0
	a.AfterStoreRead = func() { filled++ }
	if _, _, err = read(t, a, "part", "p", false, &n); err != nil || filled != 0 {
		t.Fatalf("a part record: %v, after-store-read ran %d times", err, filled)
	}
	if _, err := a.KV.Get(ctx, "part"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("a part record was cached: %v", err)
	}
}

// TestAsideCacheDown: under on_error=store a failing cache is bypassed,
// counted as a cache error and not filled; under fail the read fails.
func TestAsideCacheDown(t *testing.T) {
	a := newTestAside(downKV{}, WriteInvalidate, OnErrorStore)
	n := 0
	got, e, err := read(t, a, "k", "v", true, &n)
	if err != nil || got != "v" || !e.Error || e.Miss || e.Hit || e.CacheCalls != 1 {
		t.Fatalf("store policy: %q %+v %v", got, e, err)
	}
	if r := a.Report(); r["fill_errors"] != int64(0) {
		t.Fatalf("a read that bypassed the cache filled it: %v fill errors", r["fill_errors"])
	}
	a.OnError = OnErrorFail
	if _, _, err := read(t, a, "k", "v", true, &n); !errors.Is(err, errDown) || n != 1 {
		t.Fatalf("fail policy: %v (store calls %d), want the cache's error", err, n)
	}
}

// TestAsideWrites: invalidate drops the key, write-through changes the
// cached entry and skips a key the cache does not hold; the counters and
// the report show it.
func TestAsideWrites(t *testing.T) {
	ctx := context.Background()
	a := newTestAside(lru.New(1<<20, engine.ErrNotFound), WriteInvalidate, OnErrorStore)
	if a.Through() {
		t.Fatal("invalidate policy reads as through")
	}
	var e Event
	if err := a.KV.Set(ctx, "k", []byte("old"), 0); err != nil {
		t.Fatal(err)
	}
	if err := a.Invalidate(ctx, "k", &e); err != nil {
		t.Fatal(err)
	}
	if _, err := a.KV.Get(ctx, "k"); !errors.Is(err, engine.ErrNotFound) || e.CacheCalls != 1 {
		t.Fatalf("after invalidate: %v, %d cache calls", err, e.CacheCalls)
	}
	a.Write = WriteThrough
	var seen string
	decode := func(b []byte) error { seen = string(b); return nil }
	if a.Cached(ctx, "k", &e, decode) {
		t.Fatal("write-through found an entry the cache does not hold")
	}
	if err := a.KV.Set(ctx, "k", []byte("old"), 0); err != nil {
		t.Fatal(err)
	}
	if !a.Cached(ctx, "k", &e, decode) || seen != "old" {
		t.Fatalf("write-through read %q", seen)
	}
	if err := a.Store(ctx, "k", []byte("new"), &e); err != nil {
		t.Fatal(err)
	}
	if b, err := a.KV.Get(ctx, "k"); err != nil || string(b) != "new" {
		t.Fatalf("after the through set: %q, %v", b, err)
	}
	down := newTestAside(downKV{}, WriteThrough, OnErrorStore)
	if down.Cached(ctx, "k", &e, decode) || down.Store(ctx, "k", nil, &e) == nil || down.Invalidate(ctx, "k", &e) == nil {
		t.Fatal("a failing cache answered")
	}
	r := a.Report()
	for k, want := range map[string]any{"invalidations": int64(1), "through_sets": int64(1), "through_errors": int64(0),
		"write_policy": WriteThrough, "stale_checked": true, "local_entries": 1} {
		if r[k] != want {
			t.Errorf("report %s = %v, want %v", k, r[k], want)
		}
	}
	d := down.Report()
	if d["through_errors"] != int64(2) || d["invalidate_errors"] != int64(1) {
		t.Errorf("failing cache: %v through errors, %v invalidate errors; want 2 and 1", d["through_errors"], d["invalidate_errors"])
	}
}
