package memory_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/memory"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

var ctx = context.Background()

func open(t *testing.T, assignments ...string) *memory.Conn {
	t.Helper()
	set := enginetest.Settings(t, memory.Name, nil, assignments...)
	return enginetest.OpenEngine(t, memory.Name, engine.Config{Settings: set, Dir: t.TempDir()}).(*memory.Conn)
}

func TestCRUD(t *testing.T) {
	t.Parallel()
	c := open(t)
	v := []byte("v1")
	if err := c.Put(ctx, "k", memory.Record{"a": v, "b": []byte("b1")}); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X' // the store must have copied
	got, err := c.Get(ctx, "k")
	if err != nil || string(got["a"]) != "v1" || string(got["b"]) != "b1" {
		t.Fatalf("Get = %v, %v", got, err)
	}
	if err := c.Update(ctx, "k", memory.Record{"a": []byte("v2")}); err != nil {
		t.Fatal(err)
	}
	got, _ = c.Get(ctx, "k")
	if string(got["a"]) != "v2" || string(got["b"]) != "b1" {
		t.Fatalf("after update: %q", got)
	}
	if err := c.Insert(ctx, "k", memory.Record{}); !errors.Is(err, memory.ErrExists) {
		t.Fatalf("Insert of existing key: %v", err)
	}
	if err := c.Update(ctx, "nope", memory.Record{}); !errors.Is(err, engine.ErrNotFound) || metrics.ClassOf(err) != metrics.NotFound {
		t.Fatalf("Update of missing key: %v", err)
	}
	if _, err := c.Get(ctx, "nope"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Get of missing key: %v", err)
	}
	if err := c.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "k"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("second Delete: %v", err)
	}
	if c.Len() != 0 {
		t.Fatalf("Len = %d", c.Len())
	}
}

func TestScanOrdered(t *testing.T) {
	t.Parallel()
	c := open(t)
	var keys []string
	for i, n := range rand.Perm(1_000_000)[:2000] { // distinct keys in random order
		k := fmt.Sprintf("user%06d", n)
		if err := c.Put(ctx, k, memory.Record{"f": []byte(k)}); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
		if i%500 == 0 { // interleave scans with inserts and deletes
			if err := c.Scan(ctx, "", 1, func(string, memory.Record) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, k := range keys[:300] {
		if err := c.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Put(ctx, keys[0], memory.Record{"f": []byte(keys[0])}); err != nil { // reinsert a deleted key
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, k := range keys[300:] {
		want[k] = true
	}
	want[keys[0]] = true
	sorted := make([]string, 0, len(want))
	for k := range want {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	if c.Len() != len(sorted) {
		t.Fatalf("Len = %d, want %d", c.Len(), len(sorted))
	}

	for _, tc := range []struct {
		start string
		n     int
	}{{"", 0}, {"", 10}, {sorted[100], 50}, {sorted[100] + "0", 50}, {"user999999x", 10}, {"", 1 << 20}} {
		var got []string
		err := c.Scan(ctx, tc.start, tc.n, func(k string, rec memory.Record) error {
			if string(rec["f"]) != k {
				return fmt.Errorf("record of %s is %q", k, rec["f"])
			}
			got = append(got, k)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		i, _ := slices.BinarySearch(sorted, tc.start)
		exp := sorted[i:]
		if tc.n > 0 && len(exp) > tc.n {
			exp = exp[:tc.n]
		}
		if !slices.Equal(got, exp) {
			t.Errorf("Scan(%q, %d) = %d keys %v..., want %d keys", tc.start, tc.n, len(got), head(got), len(exp))
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := c.Scan(ctx, "", 0, func(string, memory.Record) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("Scan did not stop at fn's error: %v after %d", err, n)
	}
}

func head(s []string) []string {
	if len(s) > 3 {
		return s[:3]
	}
	return s
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	c := open(t)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := fmt.Sprintf("k%d-%d", w, i)
				switch i % 4 {
				case 0, 1:
					c.Put(ctx, k, memory.Record{"f": []byte("x")})
				case 2:
					c.Get(ctx, fmt.Sprintf("k%d-%d", w, i-1))
				case 3:
					prev := ""
					c.Scan(ctx, "k", 20, func(k string, _ memory.Record) error {
						if k < prev {
							t.Errorf("scan out of order: %q after %q", k, prev)
						}
						prev = k
						return nil
					})
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() != 8*1000 {
		t.Fatalf("Len = %d", c.Len())
	}
}

func TestDropWrites(t *testing.T) {
	t.Parallel()
	c := open(t, "memory.drop_writes=0.001")
	const n = 100_000
	for i := range n {
		if err := c.Insert(ctx, fmt.Sprint(i), memory.Record{"f": nil}); err != nil {
			t.Fatal(err)
		}
	}
	// Binomial(100000, 0.001): mean 100, standard deviation 10.
	if lost := n - c.Len(); lost < 50 || lost > 150 {
		t.Fatalf("lost %d of %d writes, want about 100", lost, n)
	}
}

func TestErrorRateAndClass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		class string
		want  metrics.Class
	}{{"other", metrics.Other}, {"timeout", metrics.Timeout}, {"refused", metrics.Refused}, {"rejected", metrics.Rejected}} {
		t.Run(tc.class, func(t *testing.T) {
			t.Parallel()
			c := open(t, "memory.error_rate=0.1", "memory.error_class="+tc.class)
			const n = 20_000
			failed := 0
			for i := range n {
				err := c.Put(ctx, fmt.Sprint(i), memory.Record{})
				if err != nil {
					failed++
					if !errors.Is(err, memory.ErrInjected) || metrics.ClassOf(err) != tc.want {
						t.Fatalf("error %v has class %v, want %v", err, metrics.ClassOf(err), tc.want)
					}
				}
			}
			// Binomial(20000, 0.1): mean 2000, standard deviation 42.
			if failed < 1800 || failed > 2200 {
				t.Fatalf("%d of %d failed, want about 2000", failed, n)
			}
			if c.Len() != n-failed {
				t.Fatalf("Len = %d, want %d", c.Len(), n-failed)
			}
		})
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	c := open(t, "memory.latency=20ms", "memory.latency_jitter=10ms")
	start := time.Now()
	for range 5 {
		if _, err := c.Get(ctx, "x"); !errors.Is(err, engine.ErrNotFound) {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("5 ops took %v, want >= 100ms", d)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	if err := c.Put(cctx, "k", nil); metrics.ClassOf(err) != metrics.Timeout {
		t.Fatalf("Put past its deadline: %v (class %v)", err, metrics.ClassOf(err))
	}
}

func TestInfoAndSettings(t *testing.T) {
	t.Parallel()
	c := open(t, "memory.error_class=rejected")
	info, err := c.Info(ctx)
	if err != nil || info.Engine != "memory" || info.Extra["error_class"] != "rejected" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	set := setting.NewSet((&memory.Engine{}).Settings()...)
	if err := set.Apply("memory.error_rate=1.5"); !errors.Is(err, setting.ErrBadValue) {
		t.Fatalf("error_rate=1.5 accepted: %v", err)
	}
	// Open without settings uses the defaults.
	conn, err := (&memory.Engine{}).Open(ctx, engine.Config{})
	if err != nil || conn.(*memory.Conn).Faults() != (memory.Faults{ErrorClass: metrics.Other}) {
		t.Fatalf("Open without settings: %+v, %v", conn, err)
	}
}

func BenchmarkPutGet(b *testing.B) {
	c := memory.New(memory.Faults{})
	rec := memory.Record{"f": make([]byte, 100)}
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprint("user", i)
		c.Put(ctx, keys[i], rec)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			k := keys[i%len(keys)]
			if i%10 == 0 {
				c.Put(ctx, k, rec)
			} else {
				c.View(ctx, k, func(memory.Record) error { return nil })
			}
			i++
		}
	})
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	msg := `</script><img src=x onerror=alert(1)>`
	c := open(t, "memory.error_rate=1", "memory.error_message="+msg)
	err := c.Put(ctx, "k", nil)
	if !errors.Is(err, memory.ErrInjected) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("Put = %v, want the injected error with the message", err)
	}
	if info, _ := c.Info(ctx); info.Extra["error_message"] != msg {
		t.Fatalf("Info.Extra = %v", info.Extra)
	}
}
