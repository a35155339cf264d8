package load

import (
	"testing"
	"time"
)

func TestRemaining(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opt     Options
		elapsed time.Duration
		done    int64
		want    time.Duration
		ok      bool
	}{
		{Options{Duration: 10 * time.Second}, 4 * time.Second, 100, 6 * time.Second, true},
		{Options{Duration: 10 * time.Second}, 12 * time.Second, 100, 0, true},
		{Options{Ops: 1000}, 0, 0, 0, false},
		{Options{Ops: 1000}, 2 * time.Second, 0, 0, false},
		{Options{Ops: 1000}, 2 * time.Second, 250, 6 * time.Second, true},                            // 125/s, 750 left
		{Options{Ops: 1000, Duration: 4 * time.Second}, 2 * time.Second, 250, 2 * time.Second, true}, // the duration ends first
		{Options{Ops: 1000, Duration: time.Minute}, 2 * time.Second, 250, 6 * time.Second, true},     // the operations end first
	} {
		got, ok := Remaining(tc.opt, tc.elapsed, tc.done)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Remaining(%+v, %s, %d) = %s, %t; want %s, %t", tc.opt, tc.elapsed, tc.done, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBoundAndEstimate(t *testing.T) {
	t.Parallel()
	if got := Bound(Options{Duration: DefaultDuration}); got != "10s" {
		t.Errorf("Bound = %q", got)
	}
	if got := Bound(Options{Ops: 250_000}); got != "250,000 operations" {
		t.Errorf("Bound = %q", got)
	}
	if got := Bound(Options{Ops: 1000, Duration: time.Minute}); got != "1,000 operations or 1m0s, whichever comes first" {
		t.Errorf("Bound = %q", got)
	}
	if _, ok := OpsEstimate(250_000, 5*time.Second, 0); ok {
		t.Error("an estimate before any operation")
	}
	got, ok := OpsEstimate(250_000, 5*time.Second, 1000) // 200/s: 1250 s
	if !ok || got != "250,000 operations, about 21 minutes at the current rate (200 ops/s)" {
		t.Errorf("OpsEstimate = %q", got)
	}
	for d, want := range map[time.Duration]string{40 * time.Second: "40 seconds", 12 * time.Minute: "12 minutes", 210 * time.Minute: "3.5 hours"} {
		if got := About(d); got != want {
			t.Errorf("About(%s) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q", n, got)
		}
	}
}

func TestLoopsRemaining(t *testing.T) {
	cases := []struct {
		el          time.Duration
		done, total int64
		want        time.Duration
		ok          bool
	}{
		{10 * time.Second, 0, 100, 0, false},
		{10 * time.Second, 25, 100, 30 * time.Second, true},
		{10 * time.Second, 100, 100, 0, true},
		{0, 5, 100, 0, false},
	}
	for _, c := range cases {
		got, ok := LoopsRemaining(c.el, c.done, c.total)
		if ok != c.ok || got != c.want {
			t.Errorf("LoopsRemaining(%s, %d, %d) = %s, %t; want %s, %t", c.el, c.done, c.total, got, ok, c.want, c.ok)
		}
	}
}
