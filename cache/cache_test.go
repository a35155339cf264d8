package cache

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/setting"
)

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
