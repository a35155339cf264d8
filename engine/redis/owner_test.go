package redis_test

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/recordstest"
	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/engine/redis/redistest"
	"github.com/scalelab/scalelab/setting"
)

// openPrefix connects to the shared test server with redis.prefix=prefix
// and the settings, and deletes the keys under prefix when t ends.
func openPrefix(t testing.TB, prefix string, settings ...string) *redis.Conn {
	t.Helper()
	set := setting.NewSet((&redis.Engine{}).Settings()...)
	for _, kv := range append([]string{redis.KeyPrefix + "=" + prefix}, settings...) {
		if err := set.Apply(kv); err != nil {
			t.Fatal(err)
		}
	}
	c := enginetest.OpenEngine(t, redis.Name, engine.Config{Settings: set, Cluster: redistest.Server.Get(t)}).(*redis.Conn)
	t.Cleanup(func() { _ = redistest.DeletePrefix(context.Background(), c, prefix) })
	return c
}

// TestOwnership plants a user's keys under PREFIX + "usertable:" and
// checks that a run's collection of that name is refused with the keys
// intact, that another prefix proceeds, and that redis.replace_existing
// replaces them; and that a user's key outside the prefix is never
// touched by any of it.
func TestOwnership(t *testing.T) {
	ctx := context.Background()
	prefix, other := enginetest.Name()+":", enginetest.Name()+":"
	admin := openPrefix(t, prefix).Client()
	outside := enginetest.Name() + "-app:user:1"
	if err := admin.Set(ctx, outside, "precious", 0).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Del(context.Background(), outside) })
	recordstest.Ownership(t, recordstest.Owned{
		Engine: redis.Name, Name: "usertable", Object: prefix + "usertable:*",
		Plant: func(t testing.TB) {
			if err := admin.HSet(ctx, prefix+"usertable:alice", "v", "precious").Err(); err != nil {
				t.Fatal(err)
			}
		},
		Intact: func(t testing.TB) bool {
			v, err := admin.HGet(ctx, prefix+"usertable:alice", "v").Result()
			return err == nil && v == "precious"
		},
		Open:  func(t testing.TB, s ...string) engine.Records { return openPrefix(t, prefix, s...) },
		Other: func(t testing.TB) engine.Records { return openPrefix(t, other) },
	})
	if v, err := admin.Get(ctx, outside).Result(); err != nil || v != "precious" {
		t.Fatalf("the user's %s outside the prefix: %q, %v", outside, v, err)
	}
	if n, _ := admin.Exists(ctx, prefix+"usertable:alice").Result(); n != 0 {
		t.Fatalf("replace_existing left the user's key under the collection's prefix")
	}
	if v, err := admin.Get(ctx, prefix+"usertable:owner").Result(); err != nil || !engine.IsMark(v) {
		t.Fatalf("owner key: %q, %v; want scalelab's mark", v, err)
	}
}
