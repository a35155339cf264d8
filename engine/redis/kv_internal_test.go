package redis

import (
	"testing"
	"time"
)

// TestTTLMillis: a ttl is rounded up to Redis's millisecond, never down
// (go-redis would cut 1.9995s to 1.999s) and never to 0.
func TestTTLMillis(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		0: 0, time.Nanosecond: time.Millisecond, 1499500 * time.Microsecond: 1500 * time.Millisecond,
		1500 * time.Millisecond: 1500 * time.Millisecond, 2*time.Second - time.Microsecond: 2 * time.Second,
	} {
		if got := ttlMillis(in); got != want {
			t.Errorf("ttlMillis(%v) = %v, want %v", in, got, want)
		}
	}
}
