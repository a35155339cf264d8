package redis_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/engine/redis/redistest"
	"github.com/scalelab/scalelab/internal/testproc"
	"github.com/scalelab/scalelab/metrics"
)

// kvOf opens namespace ns of c's key-value cache.
func kvOf(t *testing.T, c *redis.Conn, ns string, fresh bool) engine.KV {
	t.Helper()
	kv, err := c.KV(context.Background(), ns, fresh)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// mustGet fails t unless key holds want.
func mustGet(t *testing.T, kv engine.KV, key, want string) {
	t.Helper()
	got, err := kv.Get(context.Background(), key)
	if err != nil || string(got) != want {
		t.Fatalf("Get %s = %q, %v; want %q", key, got, err, want)
	}
}

// mustMiss fails t unless key is absent (engine.ErrNotFound, class
// not_found).
func mustMiss(t *testing.T, kv engine.KV, key string) {
	t.Helper()
	_, err := kv.Get(context.Background(), key)
	if !errors.Is(err, engine.ErrNotFound) || metrics.ClassOf(err) != metrics.NotFound {
		t.Fatalf("Get %s: %v (class %v), want not found", key, err, metrics.ClassOf(err))
	}
}

// TestKV: get, set (replacing), delete (also of a key that is not
// there), binary values, expiry with a ttl (to the millisecond) and none
// without one; namespaces are distinct.
func TestKV(t *testing.T) {
	ctx := context.Background()
	c := open(t)
	kv := kvOf(t, c, "ycsb", true)
	mustMiss(t, kv, "user1")
	for _, v := range []string{"v1", "v2", "\x00\r\n binary"} {
		if err := kv.Set(ctx, "user1", []byte(v), 0); err != nil {
			t.Fatal(err)
		}
		mustGet(t, kv, "user1", v)
	}
	mustMiss(t, kvOf(t, c, "other", false), "user1")
	if err := kv.Delete(ctx, "user1"); err != nil {
		t.Fatal(err)
	}
	mustMiss(t, kv, "user1")
	if err := kv.Delete(ctx, "user1"); err != nil {
		t.Fatalf("delete of a key that is not there: %v", err)
	}

	// no ttl: no expiry; a ttl: expiry rounded up to the millisecond
	if err := kv.Set(ctx, "forever", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	if err := kv.Set(ctx, "later", []byte("x"), 1499500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if err := kv.Set(ctx, "soon", []byte("x"), 150*time.Millisecond); err != nil {
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
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := kv.Get(ctx, "soon")
		if errors.Is(err, engine.ErrNotFound) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("an entry with a ttl of 150ms is still there after 5s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mustGet(t, kv, "forever", "x")
	if err := kv.Set(ctx, "neg", []byte("x"), -time.Second); !errors.Is(err, engine.ErrConfig) {
		t.Errorf("a negative ttl: %v", err)
	}
	if _, err := c.KV(ctx, "a:b", false); !errors.Is(err, engine.ErrConfig) {
		t.Errorf("a namespace with ':': %v", err)
	}
	if !(&redis.Engine{}).HasCache() || !slices.Contains(engine.WithCache(), redis.Name) {
		t.Errorf("engine.WithCache() = %v, want redis among them", engine.WithCache())
	}
}

// TestKVGenerations: two handles on one namespace (a fresh one, then one
// that joins it) see each other's keys; a fresh handle starts a new
// generation that hides them, and deletes the older generations' keys
// from the server (but not those of a newer one).
func TestKVGenerations(t *testing.T) {
	ctx := context.Background()
	c := open(t)
	a := kvOf(t, c, "gen", true)
	b := kvOf(t, c, "gen", false)
	if err := a.Set(ctx, "k1", []byte("from a"), 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx, "k2", []byte("from b"), time.Minute); err != nil {
		t.Fatal(err)
	}
	mustGet(t, b, "k1", "from a")
	mustGet(t, a, "k2", "from b")

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
	fresh := kvOf(t, c, "gen", true)
	mustMiss(t, fresh, "k1")
	mustMiss(t, fresh, "k2")
	if n := count(fmt.Sprintf("%s%d:*", base, gen)); n != 0 {
		t.Errorf("%d keys of the replaced generation are left on the server", n)
	}
	if count(newer) != 1 {
		t.Error("the fresh start deleted a newer generation's key")
	}
	// the old handles' keys are gone with their generation
	mustMiss(t, a, "k1")
	if err := fresh.Set(ctx, "k1", []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	mustGet(t, kvOf(t, c, "gen", false), "k1", "new")
}

// TestKVErrors: failures of the server are classed as the records' are
// (a stopped server times out, a full one rejects writes), never as a
// miss.
func TestKVErrors(t *testing.T) {
	ctx := context.Background()
	st := redistest.Server(t)
	c := open(t, "redis.timeout=300ms")
	kv := kvOf(t, c, "err", true)
	if err := kv.Set(ctx, "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	pid := st.Nodes[0].PID
	testproc.Stop(t, pid)
	_, err := kv.Get(ctx, "k")
	if cerr := syscall.Kill(pid, syscall.SIGCONT); cerr != nil {
		t.Fatal(cerr)
	}
	if err = c.Classify(ctx, err); errors.Is(err, engine.ErrNotFound) || metrics.ClassOf(err) != metrics.Timeout {
		t.Errorf("server stopped: %v (class %v)", err, metrics.ClassOf(err))
	}

	admin := c.Client()
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	err = kv.Set(ctx, "k2", []byte("v"), 0)
	if rerr := admin.ConfigSet(ctx, "maxmemory", "0").Err(); rerr != nil {
		t.Fatal(rerr)
	}
	if err = c.Classify(ctx, err); metrics.ClassOf(err) != metrics.Rejected {
		t.Errorf("out of memory: %v (class %v)", err, metrics.ClassOf(err))
	}
}
