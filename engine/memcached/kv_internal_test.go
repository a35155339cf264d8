package memcached

import (
	"errors"
	"testing"
	"time"
)

// TestExpiration: a ttl becomes whole seconds rounded up (never 0, which
// memcached reads as no expiry); 30 days is the longest memcached reads
// as a time from now, and more is refused.
func TestExpiration(t *testing.T) {
	for in, want := range map[time.Duration]int32{
		0: 0, time.Nanosecond: 1, 100 * time.Millisecond: 1, time.Second: 1, 1200 * time.Millisecond: 2,
		MaxTTL: 2592000, MaxTTL - 500*time.Millisecond: 2592000,
	} {
		if got, err := expiration(in); got != want || err != nil {
			t.Errorf("expiration(%v) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []time.Duration{MaxTTL + time.Nanosecond, 365 * 24 * time.Hour, -time.Second} {
		if _, err := expiration(bad); !errors.Is(err, ErrTTL) {
			t.Errorf("expiration(%v): %v, want ErrTTL", bad, err)
		}
	}
}
