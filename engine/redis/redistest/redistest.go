// Package redistest gives tests a Redis server for the redis engine,
// started once per test binary as `scalelab cluster up redis` starts one,
// and registers the engine's test provider: a key prefix of its own per
// store, whose keys are deleted when the test ends.
package redistest

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/redis"
	"github.com/scalelab/scalelab/setting"
)

// Server is the test binary's Redis server, started on first use and
// stopped when the test binary ends (enginetest.Main). Without the server
// binary its error wraps redis.ErrNoServer.
var Server = enginetest.LocalServer{Kind: "redistest", Binary: redis.Binary, Spec: cluster.Spec{Engine: redis.Name}}

// Open connects to the shared server with set, under a key prefix of its
// own (set's redis.prefix), and deletes the prefix's keys when t ends.
func Open(t testing.TB, set *setting.Set) *redis.Conn {
	t.Helper()
	st := Server.Get(t)
	prefix := enginetest.Name() + ":"
	if err := set.Apply(redis.KeyPrefix + "=" + prefix); err != nil {
		t.Fatal(err)
	}
	c := enginetest.OpenEngine(t, redis.Name, engine.Config{Settings: set, Cluster: st}).(*redis.Conn)
	t.Cleanup(func() {
		if err := DeletePrefix(context.Background(), c, prefix); err != nil {
			t.Errorf("delete the keys of %s: %v", prefix, err)
		}
	})
	return c
}

// DeletePrefix deletes every key that starts with prefix (a prefix of
// letters, digits, '_', ':' and '-', with no glob characters).
func DeletePrefix(ctx context.Context, c *redis.Conn, prefix string) error {
	cl := c.Client()
	var cursor uint64
	for {
		keys, next, err := cl.Scan(ctx, cursor, prefix+"*", 1000).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			if err := cl.Unlink(ctx, keys...).Err(); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// The redis provider: a key prefix of its own per store on the shared
// server.
func init() {
	enginetest.Register(enginetest.Provider{
		Engine: redis.Name,
		Open:   func(t testing.TB, set *setting.Set) engine.Conn { return Open(t, set) },
	})
}
