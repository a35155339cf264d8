package redis_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/recordstest"
	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/engine/redis/redistest"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

func TestMain(m *testing.M) { enginetest.Main(m) }

// open returns a fresh store on the shared server with the assignments
// applied to the engine's settings.
func open(t *testing.T, assignments ...string) *redis.Conn {
	t.Helper()
	return redistest.Open(t, enginetest.Settings(t, redis.Name, nil, assignments...))
}

// collection opens a collection of three fields on c.
func collection(t *testing.T, c *redis.Conn, name string, recreate bool) engine.Collection {
	t.Helper()
	return recordstest.OpenCollection(t, c, name, []string{"fa", "fb", "fc"}, recreate)
}

var vals = recordstest.Vals3

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		target string
		want   redis.Target
	}{
		{"redis://127.0.0.1:7000/2", redis.Target{Addr: "127.0.0.1:7000", DB: 2}},
		{"redis://app@db.example", redis.Target{Addr: "db.example:6379", Username: "app"}},
		{"127.0.0.1:7001", redis.Target{Addr: "127.0.0.1:7001"}},
	} {
		got, err := redis.ParseTarget(tc.target)
		if err != nil || got != tc.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", tc.target, got, err, tc.want)
		}
		if strings.Contains(got.Redacted(), "s3cr3t") {
			t.Errorf("Redacted() of %q shows the password: %s", tc.target, got.Redacted())
		}
	}
	if got, _ := redis.ParseTarget("redis://app@h:1/3"); got.Redacted() != "redis://app@h:1/3" {
		t.Errorf("Redacted() = %s", got.Redacted())
	}
	// a password in the target is refused, as postgres and mongodb targets
	// are, without being shown
	for _, pw := range []string{"redis://:s3cr3t@127.0.0.1:7000/0", "redis://app:s3cr3t@db.example"} {
		err := (&redis.Engine{}).CheckTarget(pw)
		if !errors.Is(err, engine.ErrConfig) || !strings.Contains(err.Error(), "holds a password") ||
			!strings.Contains(err.Error(), redis.PasswordEnv) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("CheckTarget(%q) = %v", pw, err)
		}
	}
	enginetest.RefusesTargets(t, (&redis.Engine{}).CheckTarget, "s3cr3t", "", "redis://:s3cr3t@h:99999/0", "rediss://:s3cr3t@h:1",
		"http://:s3cr3t@h:1", "redis://:s3cr3t@h:1/db", "redis://:s3cr3t@h:1/0?pool_size=3", "redis://:s3cr3t@:1", "nohost",
		"redis://:s3cr3t@h:1:2/0 %zz")
}

// TestSettingsValidated: bad values are refused when set, naming the key.
func TestSettingsValidated(t *testing.T) {
	enginetest.RefusesSettings(t, setting.NewSet((&redis.Engine{}).Settings()...),
		"redis.prefix=a b", "redis.prefix=x*", "redis.pool_size=-1", "redis.timeout=0s", "redis.connect_timeout=soon")
	o := redis.OptionsFrom(nil)
	if o.PoolSize < 64 || o.Timeout != 10*time.Second || o.Prefix != "scalelab:" {
		t.Errorf("defaults %+v", o)
	}
}

// TestInsertExists: an insert of a stored key fails with ErrExists (class
// other) and leaves the record as it was; update and delete of a missing
// key are not found.
func TestInsertExists(t *testing.T) {
	col := collection(t, open(t), "ins", true)
	recordstest.InsertExists(t, col, redis.ErrExists)
	if n, err := col.Count(context.Background()); err != nil || n != 1 {
		t.Errorf("Count %d, %v", n, err)
	}
}

// TestConcurrentFieldUpdates: concurrent updates of different fields of
// one record all stay (HSET changes only the fields it names).
func TestConcurrentFieldUpdates(t *testing.T) {
	recordstest.ConcurrentFieldUpdates(t, collection(t, open(t), "conc", true))
}

// TestPrefixIsolates: two prefixes on one server are two stores; a
// collection reopened without Recreate keeps its records.
func TestPrefixIsolates(t *testing.T) {
	ctx := context.Background()
	a, b := open(t), open(t)
	ca := collection(t, a, "iso", true)
	cb := collection(t, b, "iso", true)
	if err := ca.Insert(ctx, []byte("k"), vals("a")); err != nil {
		t.Fatal(err)
	}
	var rows engine.Rows
	rows.Reset(3)
	if err := cb.Get(ctx, []byte("k"), engine.AllFields, &rows); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("the other prefix sees the record: %v", err)
	}
	again := collection(t, a, "iso", false)
	if n, err := again.Count(ctx); err != nil || n != 1 {
		t.Fatalf("reopened without Recreate: Count %d, %v", n, err)
	}
	if mx, err := again.MaxKey(ctx); err != nil || string(mx) != "k" {
		t.Fatalf("MaxKey %q, %v", mx, err)
	}
}

// TestScanByteOrder: scans follow the keys' bytes, whatever they are, and
// skip nothing when a batch is loaded twice.
func TestScanByteOrder(t *testing.T) {
	ctx := context.Background()
	col := collection(t, open(t), "order", true)
	keys := [][]byte{[]byte("a"), []byte("a\x00"), []byte("a b"), []byte("B"), []byte("\xff"), []byte("ab")}
	b := engine.NewBatch(3, len(keys))
	for _, k := range keys {
		b.Keys[b.N] = k
		copy(b.Row(b.N), vals(string(k)))
		b.N++
	}
	for range 2 {
		if err := col.InsertBatch(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var rows engine.Rows
	rows.Reset(3)
	if err := col.Scan(ctx, nil, 0, 2, &rows); err != nil || rows.Len() != 0 {
		t.Fatalf("scan of 0 records: %d rows, %v", rows.Len(), err)
	}
	if err := col.Scan(ctx, []byte("a"), 10, 2, &rows); err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "a\x00", "a b", "ab", "\xff"}
	if rows.Len() != len(want) {
		t.Fatalf("scan from a: %d rows, want %d", rows.Len(), len(want))
	}
	for i, k := range want {
		v, ok := rows.Value(i, 2)
		if string(rows.Key(i)) != k || !ok || !bytes.Equal(v, []byte(k+"c")) {
			t.Errorf("row %d: %q = %q, want %q", i, rows.Key(i), v, k)
		}
		if _, ok := rows.Value(i, 0); ok {
			t.Errorf("row %d has field 0, which was not asked for", i)
		}
	}
}

// TestClassify classes real failures: nothing listening (refused), a
// wrong password (refused, never shown), a server that stopped answering
// (timeout), a server out of memory (rejected), a cancelled context; an
// error that is not the engine's is left alone.
func TestClassify(t *testing.T) {
	ctx := context.Background()
	st := redistest.Server.Get(t)
	o := redis.OptionsFrom(nil)
	o.Timeout, o.ConnectTimeout = 300*time.Millisecond, 300*time.Millisecond
	enginetest.NothingListening(t, func(addr string) error {
		_, err := redis.Connect(ctx, redis.Target{Addr: addr}, o)
		return err
	})
	_, err := redis.Connect(ctx, redis.Target{Addr: st.Nodes[0].ClientAddress(), Password: "not-the-password"}, o)
	if !errors.Is(err, engine.ErrConfig) || metrics.ClassOf(err) != metrics.Refused || strings.Contains(err.Error(), "not-the-password") {
		t.Errorf("wrong password: %v (class %v)", err, metrics.ClassOf(err))
	}

	c := open(t, "redis.timeout=300ms")
	col := collection(t, c, "cls", true)
	if err := col.Insert(ctx, []byte("k"), vals("1")); err != nil {
		t.Fatal(err)
	}
	// a server that stops answering: its process stopped (SIGSTOP)
	recordstest.StoppedServerTimesOut(t, col, []byte("k"), st.Nodes[0].PID, c.Classify)

	// out of memory: a limit below what the server uses, no eviction
	admin := c.Client()
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	err = col.Insert(ctx, []byte("k2"), vals("2"))
	if rerr := admin.ConfigSet(ctx, "maxmemory", "0").Err(); rerr != nil {
		t.Fatal(rerr)
	}
	if err = c.Classify(ctx, err); !strings.Contains(fmt.Sprint(err), "OOM") || metrics.ClassOf(err) != metrics.Rejected {
		t.Errorf("out of memory: %v (class %v)", err, metrics.ClassOf(err))
	}

	recordstest.CancelledAndForeign(t, col, []byte("k"), c.Classify, errors.New("not redis's"))
	if got := c.Classify(ctx, nil); got != nil {
		t.Errorf("Classify(nil) = %v", got)
	}
}

// TestPasswordSources: the password from the environment or from a 0600
// file; Info shows neither, a target holding one and a file others can
// read are refused.
func TestPasswordSources(t *testing.T) {
	ctx := context.Background()
	st := redistest.Server.Get(t)
	pw, err := st.Password()
	if err != nil {
		t.Fatal(err)
	}
	e := &redis.Engine{}
	set := enginetest.Settings(t, redis.Name, nil)
	_, err = e.Open(ctx, engine.Config{Target: "redis://:" + pw + "@" + st.Nodes[0].ClientAddress() + "/1", Settings: set})
	if !errors.Is(err, engine.ErrConfig) || strings.Contains(err.Error(), pw) {
		t.Fatalf("password in the target: %v", err)
	}
	t.Setenv(redis.PasswordEnv, pw)
	c, err := e.Open(ctx, engine.Config{Target: "redis://" + st.Nodes[0].ClientAddress() + "/1", Settings: set})
	if err != nil {
		t.Fatalf("password in %s: %v", redis.PasswordEnv, err)
	}
	info, err := c.Info(ctx)
	c.Close()
	if err != nil || strings.Contains(fmt.Sprint(info), pw) || info.Target != "redis://"+st.Nodes[0].ClientAddress()+"/1" || !strings.HasPrefix(info.Version, "Redis ") {
		t.Fatalf("Info %+v, %v", info, err)
	}
	if info.Extra["maxmemory"] == "" || info.Extra["pool_size"] == "" {
		t.Errorf("Info extra %v", info.Extra)
	}

	file := filepath.Join(t.TempDir(), "pw")
	if _, err := cluster.NewSecret(file); err != nil {
		t.Fatal(err)
	}
	set = enginetest.Settings(t, redis.Name, nil, redis.KeyPasswordFile+"="+file)
	_, err = e.Open(ctx, engine.Config{Target: st.Target, Settings: set})
	if metrics.ClassOf(err) != metrics.Refused || !errors.Is(err, engine.ErrConfig) || !strings.Contains(err.Error(), redis.PasswordEnv) || !strings.Contains(err.Error(), redis.KeyPasswordFile) {
		t.Errorf("another password from a file: %v, want refused, a configuration error naming %s and %s", err, redis.PasswordEnv, redis.KeyPasswordFile)
	}
	if err := syscall.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = e.Open(ctx, engine.Config{Target: st.Target, Settings: set}); !errors.Is(err, engine.ErrConfig) {
		t.Errorf("a password file others can read: %v", err)
	}
}

// TestSampleStats: the server's counters and gauges.
func TestSampleStats(t *testing.T) {
	c := open(t)
	stats, err := c.SampleStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stats["redis.total_commands_processed"] <= 0 || stats["redis.connected_clients"] < 1 || stats["redis.used_memory"] <= 0 {
		t.Errorf("stats %v", stats)
	}
}

// TestClusterSpecRefused: what a redis cluster cannot be is refused before
// anything starts.
func TestClusterSpecRefused(t *testing.T) {
	enginetest.RefusesSpecs(t, redis.Provisioner{},
		cluster.Spec{Nodes: 2}, cluster.Spec{Replicas: 1}, cluster.Spec{Heap: "1g"},
		cluster.Spec{Options: map[string]string{"bind": "0.0.0.0"}},
		cluster.Spec{Options: map[string]string{"requirepass": "x"}},
		cluster.Spec{Options: map[string]string{"Bad Name": "1"}},
		cluster.Spec{Options: map[string]string{"maxmemory": "1gb\nbind 0.0.0.0"}})
}
