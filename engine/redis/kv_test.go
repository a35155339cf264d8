package redis_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/kvtest"
	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/engine/redis/redistest"
	"github.com/scalelab/scalelab/metrics"
)

// TestKV: get, set (replacing), delete (also of a key that is not
// there), binary values, expiry with a ttl (to the millisecond) and none
// without one; namespaces are distinct.
func TestKV(t *testing.T) {
	ctx := context.Background()
	c := open(t)
	kv := kvtest.Basics(t, c)
	kvtest.Expires(t, kv, 150*time.Millisecond, 50*time.Millisecond)

	// no ttl: no expiry; a ttl: expiry rounded up to the millisecond
	if err := kv.Set(ctx, "later", []byte("x"), 1499500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	var forever, later time.Duration
	for key, d := range map[string]*time.Duration{"forever": &forever, "later": &later} {
		keys, err := c.Client().Keys(ctx, c.Options().Prefix+"kv:ycsb:*:"+key).Result()
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys of %s: %v %v", key, keys, err)
		}
		if *d, err = c.Client().PTTL(ctx, keys[0]).Result(); err != nil {
			t.Fatal(err)
		}
	}
	if forever != -1 {
		t.Errorf("an entry set without a ttl expires: PTTL %v", forever)
	}
	if later <= time.Second || later > 1500*time.Millisecond {
		t.Errorf("an entry set with a ttl of 1.4995s: PTTL %v, want (1s, 1.5s]", later)
	}
	if err := kv.Set(ctx, "neg", []byte("x"), -time.Second); !errors.Is(err, engine.ErrConfig) {
		t.Errorf("a negative ttl: %v", err)
	}
	kvtest.Registered(t, c, &redis.Engine{}, redis.Name)
}

// TestKVGenerations: two handles on one namespace (a fresh one, then one
// that joins it) see each other's keys; a fresh handle starts a new
// generation that hides them, and deletes the older generations' keys
// from the server (but not those of a newer one).
func TestKVGenerations(t *testing.T) {
	ctx := context.Background()
	c := open(t)
	a, _ := kvtest.SharedNamespace(t, c, "gen")

	cl := c.Client()
	base := c.Options().Prefix + "kv:gen:"
	count := func(pattern string) int {
		t.Helper()
		keys, err := cl.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		return len(keys)
	}
	gen, err := cl.Get(ctx, base+"gen").Int64()
	if err != nil || count(fmt.Sprintf("%s%d:*", base, gen)) != 2 {
		t.Fatalf("generation %d, %v: want 2 keys in it", gen, err)
	}
	// a key of a generation newer than the fresh one to come (another
	// client's) must survive the deletion of the older ones
	newer := fmt.Sprintf("%s%d:k3", base, gen+100)
	if err := cl.Set(ctx, newer, "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	kvtest.FreshHides(t, c, "gen")
	if n := count(fmt.Sprintf("%s%d:*", base, gen)); n != 0 {
		t.Errorf("%d keys of the replaced generation are left on the server", n)
	}
	if count(newer) != 1 {
		t.Error("the fresh start deleted a newer generation's key")
	}
	// the old handles' keys are gone with their generation
	kvtest.MustMiss(t, a, "k1")
	kvtest.MustGet(t, kvtest.Open(t, c, "gen", false), "k1", "new")
}

// TestKVErrors: failures of the server are classed as the records' are
// (a stopped server times out, a full one rejects writes), never as a
// miss.
func TestKVErrors(t *testing.T) {
	ctx := context.Background()
	st := redistest.Server.Get(t)
	c := open(t, "redis.timeout=300ms")
	kv := kvtest.Open(t, c, "err", true)
	kvtest.StoppedServerTimesOut(t, kv, st.Nodes[0].PID, c.Classify)

	admin := c.Client()
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	err := kv.Set(ctx, "k2", []byte("v"), 0)
	if rerr := admin.ConfigSet(ctx, "maxmemory", "0").Err(); rerr != nil {
		t.Fatal(rerr)
	}
	if err = c.Classify(ctx, err); metrics.ClassOf(err) != metrics.Rejected {
		t.Errorf("out of memory: %v (class %v)", err, metrics.ClassOf(err))
	}
}
