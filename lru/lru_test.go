package lru

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

func TestLRULRU(t *testing.T) {
	ctx := context.Background()
	// room for about 4 entries of 100-byte values
	c := New(4*(100+2+entryOverhead), errMiss)
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
	if _, err := c.Get(ctx, "k1"); !errors.Is(err, errMiss) {
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
	if _, err := c.Get(ctx, "k0"); !errors.Is(err, errMiss) {
		t.Fatalf("deleted k0: %v", err)
	}
	// a value larger than the cache is not kept, and evicts nothing
	if err := c.Set(ctx, "big", make([]byte, 10000), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "big"); !errors.Is(err, errMiss) {
		t.Fatalf("big: %v", err)
	}
}

func TestLRUTTLAndCopies(t *testing.T) {
	ctx := context.Background()
	c := New(1<<20, errMiss)
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
	if _, err := c.Get(ctx, "a"); !errors.Is(err, errMiss) {
		t.Fatalf("expired entry: %v", err)
	}
}

// errMiss is the error the tests' caches wrap on a miss.
var errMiss = errors.New("miss")
