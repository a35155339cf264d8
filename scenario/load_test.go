package scenario

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestLoadRangesCoversEveryItemOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n       int64
		workers int
		chunk   int64
	}{{1, 4, 10}, {10, 4, 3}, {1000, 3, 7}, {100, 0, 1000}, {5, 8, 1}} {
		var mu sync.Mutex
		seen := make([]int, c.n)
		var progressed int64
		made := 0
		err := LoadRanges(context.Background(), c.n, c.workers, c.chunk, func(d int64) { progressed += d },
			func() func(context.Context, int64, int64) error {
				made++
				return func(_ context.Context, lo, hi int64) error {
					if hi-lo > c.chunk || hi <= lo {
						t.Errorf("chunk [%d,%d) of size > %d", lo, hi, c.chunk)
					}
					mu.Lock()
					for k := lo; k < hi; k++ {
						seen[k]++
					}
					mu.Unlock()
					return nil
				}
			})
		if err != nil {
			t.Fatal(err)
		}
		for k, s := range seen {
			if s != 1 {
				t.Fatalf("%+v: item %d loaded %d times", c, k, s)
			}
		}
		if progressed != c.n {
			t.Errorf("%+v: progress %d, want %d", c, progressed, c.n)
		}
		if want := min(max(c.workers, 1), int((c.n+c.chunk-1)/c.chunk)); made != want {
			t.Errorf("%+v: %d workers, want %d", c, made, want)
		}
	}
}

func TestLoadRangesStopsOnFirstError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	var mu sync.Mutex
	calls := 0
	// The first range fails at once; the others wait for the cancellation
	// (or give up after 5 s and go on, which the count then shows).
	err := LoadRanges(context.Background(), 1_000_000, 4, 10, nil, func() func(context.Context, int64, int64) error {
		return func(ctx context.Context, lo, hi int64) error {
			mu.Lock()
			calls++
			mu.Unlock()
			if lo == 0 {
				return boom
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			return nil
		}
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if calls > 4 {
		t.Errorf("%d chunks started, want at most 4 (one per worker): the error did not cancel the others", calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := LoadRanges(ctx, 10, 2, 1, nil, func() func(context.Context, int64, int64) error {
		return func(context.Context, int64, int64) error { return nil }
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: %v", err)
	}
}
