package memcached_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/kvtest"
	"github.com/scalelab/scalelab/engine/memcached"
	"github.com/scalelab/scalelab/engine/memcached/memcachedtest"
	"github.com/scalelab/scalelab/metrics"
)

// TestKV: get, set (replacing), delete (also of a key that is not
// there), binary values, keys memcached cannot take as they are, expiry
// after a ttl in whole seconds and none without one, a ttl over 30 days
// refused; namespaces are distinct.
func TestKV(t *testing.T) {
	ctx := context.Background()
	c := open(t)
	kv := kvtest.Basics(t, c)

	long := strings.Repeat("k", 300)
	odd := []string{long, long + "x", "a b", "a\nb", "ab"}
	for _, k := range odd {
		if err := kv.Set(ctx, k, []byte("value of "+k), 0); err != nil {
			t.Fatalf("set %q: %v", k, err)
		}
	}
	for _, k := range odd {
		kvtest.MustGet(t, kv, k, "value of "+k)
	}

	// a ttl of 1s (memcached's clock ticks in whole seconds: the item
	// goes between 1 and 2 s later); none without a ttl
	kvtest.Expires(t, kv, 300*time.Millisecond, 100*time.Millisecond)

	for _, ttl := range []time.Duration{memcached.MaxTTL + time.Second, -time.Second} {
		err := kv.Set(ctx, "far", []byte("x"), ttl)
		if !errors.Is(err, memcached.ErrTTL) || !errors.Is(err, engine.ErrConfig) || !strings.Contains(err.Error(), "30 days") {
			t.Errorf("ttl %v: %v, want ErrTTL", ttl, err)
		}
	}
	kvtest.MustMiss(t, kv, "far")
	if err := kv.Set(ctx, "month", []byte("x"), memcached.MaxTTL); err != nil {
		t.Fatalf("a ttl of exactly 30 days: %v", err)
	}
	kvtest.MustGet(t, kv, "month", "x") // read as a time from now, not as 1970
	kvtest.Registered(t, c, &memcached.Engine{}, memcached.Name)
}

// TestKVGenerations: two handles on one namespace (a fresh one, then one
// that joins it, also from another client) see each other's keys; a fresh
// handle starts a new generation that hides them.
func TestKVGenerations(t *testing.T) {
	ctx := context.Background()
	c := open(t)
	a, _ := kvtest.SharedNamespace(t, c, "gen")
	other, err := memcached.Connect(ctx, strings.Split(strings.TrimPrefix(memcachedtest.Server.Get(t).Target, "memcached://"), ","), c.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	kvtest.MustGet(t, kvtest.Open(t, other, "gen", false), "k1", "from a")

	kvtest.FreshHides(t, c, "gen")
	kvtest.MustGet(t, kvtest.Open(t, other, "gen", false), "k1", "new")
	kvtest.MustGet(t, a, "k1", "from a") // the old generation's handle keeps its own
}

// TestKVErrors: a server that stopped answering is a timeout, never a
// miss; an entry over the server's item size is rejected.
func TestKVErrors(t *testing.T) {
	ctx := context.Background()
	st := memcachedtest.Server.Get(t)
	c := open(t, "memcached.timeout=300ms")
	kv := kvtest.Open(t, c, "err", true)
	kvtest.StoppedServerTimesOut(t, kv, st.Nodes[0].PID, c.Classify)
	err := c.Classify(ctx, kv.Set(ctx, "big", make([]byte, 2<<20), 0))
	if metrics.ClassOf(err) != metrics.Rejected {
		t.Errorf("an entry over 1 MB: %v (class %v)", err, metrics.ClassOf(err))
	}
}
