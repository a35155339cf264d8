// Package kvtest holds the checks of the key-value cache contract
// (engine.Cacher, engine.KV) that every cache engine's tests run against a
// real server: get, set, delete, namespaces, expiry and the classes of a
// stopped server's failures.
package kvtest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/internal/testproc"
	"github.com/scalelab/scalelab/metrics"
)

// Open opens namespace ns of c's key-value cache, failing t on error.
func Open(t testing.TB, c engine.Cacher, ns string, fresh bool) engine.KV {
	t.Helper()
	kv, err := c.KV(context.Background(), ns, fresh)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// MustGet fails t unless key holds want.
func MustGet(t testing.TB, kv engine.KV, key, want string) {
	t.Helper()
	got, err := kv.Get(context.Background(), key)
	if err != nil || string(got) != want {
		t.Fatalf("Get %q = %q, %v; want %q", key, got, err, want)
	}
}

// MustMiss fails t unless key is absent (engine.ErrNotFound, class
// not_found).
func MustMiss(t testing.TB, kv engine.KV, key string) {
	t.Helper()
	_, err := kv.Get(context.Background(), key)
	if !errors.Is(err, engine.ErrNotFound) || metrics.ClassOf(err) != metrics.NotFound {
		t.Fatalf("Get %q: %v (class %v), want not found", key, err, metrics.ClassOf(err))
	}
}

// Basics checks get, set (replacing), binary values and delete (also of a
// key that is not there) on a fresh namespace of c, which another
// namespace does not see; it returns the namespace.
func Basics(t testing.TB, c engine.Cacher) engine.KV {
	t.Helper()
	ctx := context.Background()
	kv := Open(t, c, "ycsb", true)
	MustMiss(t, kv, "user1")
	for _, v := range []string{"v1", "v2", "\x00\r\n binary"} {
		if err := kv.Set(ctx, "user1", []byte(v), 0); err != nil {
			t.Fatal(err)
		}
		MustGet(t, kv, "user1", v)
	}
	MustMiss(t, Open(t, c, "other", false), "user1")
	if err := kv.Delete(ctx, "user1"); err != nil {
		t.Fatal(err)
	}
	MustMiss(t, kv, "user1")
	if err := kv.Delete(ctx, "user1"); err != nil {
		t.Fatalf("delete of a key that is not there: %v", err)
	}
	return kv
}

// SharedNamespace opens namespace ns of c twice, fresh then joining it,
// and checks that each handle sees the key the other set ("k1" from a,
// "k2" from b, with a ttl of a minute). It returns both handles.
func SharedNamespace(t testing.TB, c engine.Cacher, ns string) (a, b engine.KV) {
	t.Helper()
	ctx := context.Background()
	a = Open(t, c, ns, true)
	b = Open(t, c, ns, false)
	if err := a.Set(ctx, "k1", []byte("from a"), 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx, "k2", []byte("from b"), time.Minute); err != nil {
		t.Fatal(err)
	}
	MustGet(t, b, "k1", "from a")
	MustGet(t, a, "k2", "from b")
	return a, b
}

// FreshHides opens namespace ns of c fresh (a new generation) and checks
// that it hides the earlier generation's "k1" and "k2"; it then sets "k1"
// to "new" in it and returns it.
func FreshHides(t testing.TB, c engine.Cacher, ns string) engine.KV {
	t.Helper()
	fresh := Open(t, c, ns, true)
	MustMiss(t, fresh, "k1")
	MustMiss(t, fresh, "k2")
	if err := fresh.Set(context.Background(), "k1", []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	return fresh
}

// Expires checks that "soon", set with ttl, is there at once and then
// goes within 5 s (polled every poll), while "forever", set without a ttl,
// stays.
func Expires(t testing.TB, kv engine.KV, ttl, poll time.Duration) {
	t.Helper()
	ctx := context.Background()
	if err := kv.Set(ctx, "forever", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	if err := kv.Set(ctx, "soon", []byte("x"), ttl); err != nil {
		t.Fatal(err)
	}
	MustGet(t, kv, "soon", "x")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := kv.Get(ctx, "soon")
		if errors.Is(err, engine.ErrNotFound) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("an entry with a ttl of %v is still there after 5s: %v", ttl, err)
		}
		time.Sleep(poll)
	}
	MustGet(t, kv, "forever", "x")
}

// Registered checks that c refuses a namespace with ':' and that engine
// name says it is a cache (engine.WithCache).
func Registered(t testing.TB, c engine.Cacher, e engine.CacheEngine, name string) {
	t.Helper()
	if _, err := c.KV(context.Background(), "a:b", false); !errors.Is(err, engine.ErrConfig) {
		t.Errorf("a namespace with ':': %v", err)
	}
	if !e.HasCache() || !slices.Contains(engine.WithCache(), name) {
		t.Errorf("engine.WithCache() = %v, want %s among them", engine.WithCache(), name)
	}
}

// StoppedServerTimesOut checks that a Get from kv while the server
// process pid is stopped is classed (by classify) as a timeout, never as a
// miss.
func StoppedServerTimesOut(t testing.TB, kv engine.KV, pid int, classify func(context.Context, error) error) {
	t.Helper()
	ctx := context.Background()
	if err := kv.Set(ctx, "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	var err error
	testproc.WhileStopped(t, pid, func() { _, err = kv.Get(ctx, "k") })
	if err = classify(ctx, err); errors.Is(err, engine.ErrNotFound) || metrics.ClassOf(err) != metrics.Timeout {
		t.Errorf("server stopped: %v (class %v)", err, metrics.ClassOf(err))
	}
}
