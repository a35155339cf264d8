package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/setting"
)

func TestLRULRU(t *testing.T) {
	ctx := context.Background()
	// room for about 4 entries of 100-byte values
	c := NewLRU(4 * (100 + 2 + entryOverhead))
	v := make([]byte, 100)
	for i := range 4 {
		if err := c.Set(ctx, "k"+strconv.Itoa(i), v, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Get(ctx, "k0"); err != nil { // k0 is now the most recent
		t.Fatal(err)
	}
	if err := c.Set(ctx, "k4", v, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "k1"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("k1, the least recently used, should be gone: %v", err)
	}
	for _, k := range []string{"k0", "k2", "k3", "k4"} {
		if _, err := c.Get(ctx, k); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	n, used, ev := c.Usage()
	if n != 4 || ev != 1 || used > 4*(100+2+entryOverhead) {
		t.Fatalf("usage %d entries %d bytes %d evictions", n, used, ev)
	}
	if err := c.Delete(ctx, "k0"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "k0"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("deleted k0: %v", err)
	}
	// a value larger than the cache is not kept, and evicts nothing
	if err := c.Set(ctx, "big", make([]byte, 10000), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "big"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("big: %v", err)
	}
}

func TestLRUTTLAndCopies(t *testing.T) {
	ctx := context.Background()
	c := NewLRU(1 << 20)
	v := []byte("abc")
	if err := c.Set(ctx, "a", v, 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	v[0] = 'x'
	got, err := c.Get(ctx, "a")
	if err != nil || string(got) != "abc" {
		t.Fatalf("got %q, %v", got, err)
	}
	got[1] = 'y'
	if again, _ := c.Get(ctx, "a"); string(again) != "abc" {
		t.Fatalf("the cache kept the caller's slice: %q", again)
	}
	time.Sleep(40 * time.Millisecond)
	if _, err := c.Get(ctx, "a"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("expired entry: %v", err)
	}
}

func TestModeOf(t *testing.T) {
	for _, tc := range []struct {
		value string
		tier  bool
		want  Mode
		bad   bool
	}{{"auto", true, Shared, false}, {"auto", false, Off, false}, {"local", true, Local, false}, {"off", true, Off, false},
		{"shared", false, "", true}, {"shared", true, Shared, false}} {
		set := setting.NewSet(SpecMode())
		if err := set.Apply(KeyMode + "=" + tc.value); err != nil {
			t.Fatal(err)
		}
		m, err := ModeOf(set, tc.tier)
		if (err != nil) != tc.bad || m != tc.want {
			t.Errorf("%s with tier %v: %q, %v", tc.value, tc.tier, m, err)
		}
		if tc.bad && !errors.Is(err, setting.ErrBadValue) {
			t.Errorf("%s: %v is not a bad value", tc.value, err)
		}
	}
}

func TestStatsReport(t *testing.T) {
	s := NewStats()
	t0 := time.Unix(1_700_000_000, 0)
	s.RecordAt(t0, "read", Event{Hit: true, Cache: time.Millisecond, CacheCalls: 1})
	s.RecordAt(t0, "read", Event{Miss: true, Cache: time.Millisecond, CacheCalls: 2, Store: 4 * time.Millisecond, StoreCalls: 1})
	s.RecordAt(t0.Add(time.Second), "read", Event{Hit: true, Stale: true, Cache: time.Millisecond, CacheCalls: 1})
	r := s.Report(Shared, "redis")
	if r["hits"].(int64) != 2 || r["misses"].(int64) != 1 || r["stale_reads"].(int64) != 1 {
		t.Fatalf("totals %v", r)
	}
	if hr := r["hit_rate"].(float64); hr < 0.666 || hr > 0.667 {
		t.Fatalf("hit rate %v", hr)
	}
	op := r["by_operation"].(map[string]any)["read"].(map[string]any)
	if op["cache_ms"].(float64) != 0.75 || op["store_ms"].(float64) != 4 {
		t.Fatalf("by operation %v", op)
	}
	per := r["per_second"].([]map[string]any)
	if len(per) != 2 || per[0]["unix"].(int64) != 1_700_000_000 || per[0]["hits"].(int64) != 1 || per[0]["misses"].(int64) != 1 || per[1]["stale_reads"].(int64) != 1 {
		t.Fatalf("per second %v", per)
	}
}

// TestMissed: a not-found is a miss that may be filled; another error is
// a cache error that goes to the store unfilled, or fails the operation
// with the cache's error under on_error=fail.
func TestMissed(t *testing.T) {
	down := errors.New("connection refused")
	var e Event
	if fill, err := Missed(fmt.Errorf("get: %w", engine.ErrNotFound), OnErrorFail, &e); !fill || err != nil || !e.Miss || e.Error {
		t.Errorf("not found: fill %v, err %v, %+v", fill, err, e)
	}
	e = Event{}
	if fill, err := Missed(down, OnErrorStore, &e); fill || err != nil || e.Miss || !e.Error {
		t.Errorf("down, on_error=store: fill %v, err %v, %+v", fill, err, e)
	}
	e = Event{}
	if fill, err := Missed(down, OnErrorFail, &e); fill || !errors.Is(err, down) || e.Miss || e.Error {
		t.Errorf("down, on_error=fail: fill %v, err %v, %+v", fill, err, e)
	}
}
