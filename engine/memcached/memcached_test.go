package memcached_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/memcached"
	"github.com/scalelab/scalelab/engine/memcached/memcachedtest"
	"github.com/scalelab/scalelab/engine/recordstest"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

func TestMain(m *testing.M) { enginetest.Main(m) }

// TestRecords runs the records conformance suite, what memcached's traits
// allow of it (no scans, counts or highest key), under a namespace of its
// own on the shared memcached server.
func TestRecords(t *testing.T) {
	recordstest.RunConn(t, memcachedtest.Open(t, enginetest.Settings(t, memcached.Name, nil)))
}

// open returns a fresh store (a namespace of its own) on the shared
// server with the assignments applied to the engine's settings.
func open(t *testing.T, assignments ...string) *memcached.Conn {
	t.Helper()
	return memcachedtest.Open(t, enginetest.Settings(t, memcached.Name, nil, assignments...))
}

// collection opens a collection of nf fields on c.
func collection(t *testing.T, c *memcached.Conn, name string, nf int, recreate bool) engine.Collection {
	t.Helper()
	return recordstest.OpenCollection(t, c, name, []string{"fa", "fb", "fc", "fd"}[:nf], recreate)
}

var vals = recordstest.Vals3

func TestParseTarget(t *testing.T) {
	for target, want := range map[string]string{
		"memcached://127.0.0.1:11211":               "127.0.0.1:11211",
		"127.0.0.1:1,127.0.0.1:2":                   "127.0.0.1:1,127.0.0.1:2",
		"memcached://127.0.0.1:1, 127.0.0.1:2/":     "127.0.0.1:1,127.0.0.1:2",
		"memcached://[::1]:11211,cache.example:700": "[::1]:11211,cache.example:700",
	} {
		got, err := memcached.ParseTarget(target)
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("ParseTarget(%q) = %v, %v; want %s", target, got, err, want)
		}
	}
	enginetest.RefusesTargets(t, (&memcached.Engine{}).CheckTarget, "s3cr3t",
		"", "memcached://u:s3cr3t@127.0.0.1:1", "redis://127.0.0.1:1", "127.0.0.1", "h:0", "h:1,", "memcached://h:1/0?x=s3cr3t")
}

// TestSettingsValidated: bad values are refused when set, naming the key;
// the defaults hold a load (gomemcache's own are 2 idle connections and
// 500ms).
func TestSettingsValidated(t *testing.T) {
	enginetest.RefusesSettings(t, setting.NewSet((&memcached.Engine{}).Settings()...),
		"memcached.namespace=a b", "memcached.namespace=", "memcached.namespace=a:b", "memcached.max_idle_conns=0", "memcached.timeout=0s")
	if o := memcached.OptionsFrom(nil); o.MaxIdleConns != 64 || o.Timeout != time.Second || o.Namespace != "scalelab" {
		t.Errorf("defaults %+v", o)
	}
	c := open(t, "memcached.max_idle_conns=100", "memcached.timeout=2s")
	if mc := c.Client(); mc.MaxIdleConns != 100 || mc.Timeout != 2*time.Second {
		t.Errorf("client: %d idle, timeout %v", mc.MaxIdleConns, mc.Timeout)
	}
}

// TestInsertExists: an insert of a stored key fails with ErrExists (class
// other) and leaves the record as it was; update and delete of a missing
// key are not found.
func TestInsertExists(t *testing.T) {
	recordstest.InsertExists(t, collection(t, open(t), "ins", 3, true), memcached.ErrExists)
}

// TestConcurrentFieldUpdates: concurrent updates of different fields of
// one record all stay (each reads the record and swaps it in only if
// nobody wrote it meanwhile).
func TestConcurrentFieldUpdates(t *testing.T) {
	recordstest.ConcurrentFieldUpdates(t, collection(t, open(t), "conc", 3, true))
}

// TestKeys: keys memcached cannot take as they are (too long, with spaces
// or control characters) still work and stay distinct; binary values and
// empty fields come back as written.
func TestKeys(t *testing.T) {
	ctx := context.Background()
	col := collection(t, open(t), "keys", 3, true)
	long := bytes.Repeat([]byte("k"), 300)
	keys := [][]byte{long, append(bytes.Clone(long), 'x'), []byte("a b"), []byte("a\nb"), []byte("ab")}
	for i, k := range keys {
		v := [][]byte{{byte(i), 0, '\r', '\n'}, {}, []byte(k)}
		if err := col.Insert(ctx, k, v); err != nil {
			t.Fatalf("insert %q: %v", k, err)
		}
	}
	var rows engine.Rows
	rows.Reset(3)
	if err := col.ReadBack(ctx, append(keys, []byte("missing")), engine.AllFields, &rows); err != nil {
		t.Fatal(err)
	}
	if rows.Len() != len(keys) {
		t.Fatalf("ReadBack: %d rows, want %d", rows.Len(), len(keys))
	}
	for i, k := range keys {
		v0, _ := rows.Value(i, 0)
		v1, ok1 := rows.Value(i, 1)
		v2, _ := rows.Value(i, 2)
		if !bytes.Equal(rows.Key(i), k) || !bytes.Equal(v0, []byte{byte(i), 0, '\r', '\n'}) || !ok1 || len(v1) != 0 || !bytes.Equal(v2, k) {
			t.Errorf("row %d: key %q values %q %q %q", i, rows.Key(i), v0, v1, v2)
		}
	}
	if err := col.Delete(ctx, keys[0]); err != nil {
		t.Fatal(err)
	}
	rows.Reset(3)
	if err := col.Get(ctx, keys[1], 2, &rows); err != nil {
		t.Fatalf("the other long key went with the first: %v", err)
	}
}

// TestCollections: a collection reopened without Recreate keeps its
// records, with Recreate it is empty, and two namespaces are two stores;
// a record read with another field count is an integrity error.
func TestCollections(t *testing.T) {
	ctx := context.Background()
	a, b := open(t), open(t)
	if err := collection(t, a, "c", 3, true).Insert(ctx, []byte("k"), vals("1")); err != nil {
		t.Fatal(err)
	}
	var rows engine.Rows
	rows.Reset(3)
	if err := collection(t, a, "c", 3, false).Get(ctx, []byte("k"), engine.AllFields, &rows); err != nil {
		t.Fatalf("reopened without Recreate: %v", err)
	}
	if err := collection(t, b, "c", 3, false).Get(ctx, []byte("k"), engine.AllFields, &rows); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("another namespace: %v", err)
	}
	err := collection(t, a, "c", 2, false).Get(ctx, []byte("k"), engine.AllFields, &rows)
	if !errors.Is(err, engine.ErrIntegrity) || metrics.ClassOf(err) != metrics.Integrity {
		t.Fatalf("read with 2 fields of a record of 3: %v", err)
	}
	if err := collection(t, a, "c", 3, true).Get(ctx, []byte("k"), engine.AllFields, &rows); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("after Recreate: %v", err)
	}
}

// TestClassify classes real failures: nothing listening (refused), a
// server that stopped answering (timeout), an item larger than the server
// takes (rejected), a cancelled context; an error that is not the
// engine's is left alone.
func TestClassify(t *testing.T) {
	ctx := context.Background()
	st := memcachedtest.Server.Get(t)
	enginetest.NothingListening(t, func(addr string) error {
		_, err := memcached.Connect(ctx, []string{addr}, memcached.OptionsFrom(nil))
		return err
	})

	c := open(t, "memcached.timeout=300ms")
	col := collection(t, c, "cls", 3, true)
	if err := col.Insert(ctx, []byte("k"), vals("1")); err != nil {
		t.Fatal(err)
	}
	// a server that stops answering: its process stopped (SIGSTOP)
	recordstest.StoppedServerTimesOut(t, col, []byte("k"), st.Nodes[0].PID, c.Classify)

	// an item over the server's item size limit (1 MB)
	big := [][]byte{bytes.Repeat([]byte("x"), 2<<20), nil, nil}
	err := c.Classify(ctx, col.Insert(ctx, []byte("big"), big))
	if !strings.Contains(fmt.Sprint(err), "SERVER_ERROR") || metrics.ClassOf(err) != metrics.Rejected {
		t.Errorf("item too large: %v (class %v)", err, metrics.ClassOf(err))
	}

	recordstest.CancelledAndForeign(t, col, []byte("k"), c.Classify, errors.New("not memcached's"))
}

// TestInfoAndStats: the server's version and settings, the client's, and
// its statistics.
func TestInfoAndStats(t *testing.T) {
	ctx := context.Background()
	c := open(t)
	info, err := c.Info(ctx)
	if err != nil || !strings.HasPrefix(info.Version, "memcached 1.") || !strings.HasPrefix(info.Target, "memcached://127.0.0.1:") {
		t.Fatalf("Info %+v, %v", info, err)
	}
	if info.Extra["max_idle_conns"] != "64" || info.Extra["limit_maxbytes"] != fmt.Sprint(64<<20) || info.Extra["evictions"] != "on" {
		t.Errorf("Info extra %v", info.Extra)
	}
	if err := collection(t, c, "st", 3, true).Insert(ctx, []byte("k"), vals("1")); err != nil {
		t.Fatal(err)
	}
	stats, err := c.SampleStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats["memcached.cmd_set"] < 1 || stats["memcached.curr_items"] < 1 || stats["memcached.curr_connections"] < 1 {
		t.Errorf("stats %v", stats)
	}
}

// TestClusterSpecRefused: what a memcached cluster cannot be is refused
// before anything starts.
func TestClusterSpecRefused(t *testing.T) {
	enginetest.RefusesSpecs(t, memcached.Provisioner{},
		cluster.Spec{Nodes: 2}, cluster.Spec{Replicas: 1}, cluster.Spec{Heap: "1g"},
		cluster.Spec{Options: map[string]string{"listen": "0.0.0.0"}},
		cluster.Spec{Options: map[string]string{"memory_mb": "lots"}},
		cluster.Spec{Options: map[string]string{"threads": "0"}},
		cluster.Spec{Options: map[string]string{"evictions": "maybe"}})
}
