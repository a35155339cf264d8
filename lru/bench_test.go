package lru

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkLRUGet is a hit in the local cache (1,000 keys of 100 bytes)
// from all of GOMAXPROCS goroutines at once.
func BenchmarkLRUGet(b *testing.B) {
	ctx := context.Background()
	c := New(1<<20, errMiss)
	v := make([]byte, 100)
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
		if err := c.Set(ctx, keys[i], v, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := c.Get(ctx, keys[i%len(keys)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
