// Package memcachedtest gives tests a memcached server for the memcached
// engine, started once per test binary as `scalelab cluster up memcached`
// starts one, and stores of their own on it: a namespace per store.
//
// It registers no enginetest.Provider: the scenarios' conformance suites
// that loop over the providers scan, count and find the highest key,
// which memcached cannot (engine.Traits NoScans). The engine's tests use
// Open directly.
package memcachedtest

import (
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/memcached"
	"github.com/scalelab/scalelab/setting"
)

// Server is the test binary's memcached server, started on first use and
// stopped when the test binary ends (enginetest.Main). Without the server
// binary its error wraps memcached.ErrNoServer.
var Server = enginetest.LocalServer{Kind: "memcachedtest", Binary: memcached.Binary,
	Spec: cluster.Spec{Engine: memcached.Name, Options: map[string]string{"memory_mb": "64", "threads": "2"}}}

// Open connects to the shared server with set, under a namespace of its
// own (set's memcached.namespace). Its items stay until the server stops:
// memcached cannot list them to delete them.
func Open(t testing.TB, set *setting.Set) *memcached.Conn {
	t.Helper()
	st := Server.Get(t)
	if err := set.Apply(memcached.KeyNamespace + "=" + strings.ReplaceAll(enginetest.Name(), "_", "-")); err != nil {
		t.Fatal(err)
	}
	return enginetest.OpenEngine(t, memcached.Name, engine.Config{Settings: set, Cluster: st}).(*memcached.Conn)
}
