package memcached_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/memcached"
	"github.com/scalelab/scalelab/engine/memcached/memcachedtest"
	"github.com/scalelab/scalelab/internal/testproc"
	"github.com/scalelab/scalelab/metrics"
)

// kvOf opens namespace ns of c's key-value cache.
func kvOf(t *testing.T, c *memcached.Conn, ns string, fresh bool) engine.KV {
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
		t.Fatalf("Get %q = %q, %v; want %q", key, got, err, want)
	}
}

// mustMiss fails t unless key is absent (engine.ErrNotFound, class
// not_found).
func mustMiss(t *testing.T, kv engine.KV, key string) {
	t.Helper()
	_, err := kv.Get(context.Background(), key)
	if !errors.Is(err, engine.ErrNotFound) || metrics.ClassOf(err) != metrics.NotFound {
		t.Fatalf("Get %q: %v (class %v), want not found", key, err, metrics.ClassOf(err))
	}
}

// TestKV: get, set (replacing), delete (also of a key that is not
// there), binary values, keys memcached cannot take as they are, expiry
// after a ttl in whole seconds and none without one, a ttl over 30 days
// refused; namespaces are distinct.
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

	long := strings.Repeat("k", 300)
	odd := []string{long, long + "x", "a b", "a\nb", "ab"}
	for _, k := range odd {
		if err := kv.Set(ctx, k, []byte("value of "+k), 0); err != nil {
			t.Fatalf("set %q: %v", k, err)
		}
	}
	for _, k := range odd {
		mustGet(t, kv, k, "value of "+k)
	}

	// a ttl of 1s (memcached's clock ticks in whole seconds: the item
	// goes between 1 and 2 s later); none without a ttl
	if err := kv.Set(ctx, "forever", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	if err := kv.Set(ctx, "soon", []byte("x"), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	mustGet(t, kv, "soon", "x")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := kv.Get(ctx, "soon")
		if errors.Is(err, engine.ErrNotFound) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("an entry with a ttl of 300ms (1s) is still there after 5s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mustGet(t, kv, "forever", "x")

	for _, ttl := range []time.Duration{memcached.MaxTTL + time.Second, -time.Second} {
		err := kv.Set(ctx, "far", []byte("x"), ttl)
		if !errors.Is(err, memcached.ErrTTL) || !errors.Is(err, engine.ErrConfig) || !strings.Contains(err.Error(), "30 days") {
			t.Errorf("ttl %v: %v, want ErrTTL", ttl, err)
		}
	}
	mustMiss(t, kv, "far")
	if err := kv.Set(ctx, "month", []byte("x"), memcached.MaxTTL); err != nil {
		t.Fatalf("a ttl of exactly 30 days: %v", err)
	}
	mustGet(t, kv, "month", "x") // read as a time from now, not as 1970
	if _, err := c.KV(ctx, "a:b", false); !errors.Is(err, engine.ErrConfig) {
		t.Errorf("a namespace with ':': %v", err)
	}
	if !(&memcached.Engine{}).HasCache() || !slices.Contains(engine.WithCache(), memcached.Name) {
		t.Errorf("engine.WithCache() = %v, want memcached among them", engine.WithCache())
	}
}

// TestKVGenerations: two handles on one namespace (a fresh one, then one
// that joins it, also from another client) see each other's keys; a fresh
// handle starts a new generation that hides them.
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
	other, err := memcached.Connect(ctx, strings.Split(strings.TrimPrefix(memcachedtest.Server(t).Target, "memcached://"), ","), c.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	mustGet(t, kvOf(t, other, "gen", false), "k1", "from a")

	fresh := kvOf(t, c, "gen", true)
	mustMiss(t, fresh, "k1")
	mustMiss(t, fresh, "k2")
	if err := fresh.Set(ctx, "k1", []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	mustGet(t, kvOf(t, other, "gen", false), "k1", "new")
	mustGet(t, a, "k1", "from a") // the old generation's handle keeps its own
}

// TestKVErrors: a server that stopped answering is a timeout, never a
// miss; an entry over the server's item size is rejected.
func TestKVErrors(t *testing.T) {
	ctx := context.Background()
	st := memcachedtest.Server(t)
	c := open(t, "memcached.timeout=300ms")
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
	err = c.Classify(ctx, kv.Set(ctx, "big", make([]byte, 2<<20), 0))
	if metrics.ClassOf(err) != metrics.Rejected {
		t.Errorf("an entry over 1 MB: %v (class %v)", err, metrics.ClassOf(err))
	}
}
