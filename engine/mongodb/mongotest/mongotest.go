// Package mongotest gives tests a FerretDB server (SQLite backend) for the
// mongodb engine, started once per test binary from the launcher module
// (built from the Go module proxy on first use), and registers the
// engine's test provider: a database of its own per store, dropped when
// the test ends.
package mongotest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/setting"
)

// UpTimeout bounds the server's start, the launcher's first build included.
const UpTimeout = 5 * time.Minute

var shared enginetest.Shared[string, *cluster.State]

// Shared returns the test binary's FerretDB server of backend (sqlite or
// postgres), started on first use; it stops when the test binary exits.
func Shared(backend string) (*cluster.State, error) {
	return shared.Get(backend, func() (*cluster.State, error) {
		spec := cluster.Spec{Engine: mongodb.FerretDB, Options: map[string]string{"backend": backend}}
		st, err := enginetest.UpShared("shared ferretdb test server", "mongotest", backend, spec, "", UpTimeout, true)
		if err != nil {
			return nil, err
		}
		st.Engine = mongodb.Name
		return st, nil
	})
}

// Server returns the shared server of the SQLite backend, failing t under
// CI and skipping it elsewhere when it cannot run.
func Server(t testing.TB) *cluster.State {
	t.Helper()
	st, err := Shared("sqlite")
	if err != nil {
		enginetest.Unavailable(t, mongodb.Name, err, "make ferretdb (needs Go and the Go module proxy)")
	}
	return st
}

// Open connects to a fresh database of the shared server with set, and
// drops it when t ends.
func Open(t testing.TB, set *setting.Set) *mongodb.Conn {
	t.Helper()
	st := Server(t)
	target := fmt.Sprintf("mongodb://%s:%d/%s", st.Nodes[0].Host, st.Nodes[0].Port, enginetest.Name())
	c := enginetest.OpenEngine(t, mongodb.Name, engine.Config{Target: target, Settings: set}).(*mongodb.Conn)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.Primary().Drop(ctx)
	})
	return c
}

func init() {
	enginetest.Register(enginetest.Provider{
		Engine: mongodb.Name,
		Open:   func(t testing.TB, set *setting.Set) engine.Conn { return Open(t, set) },
		Slow:   true,
		LosesUpdates: "FerretDB v1 updates a document by reading it and writing it back whole, outside a transaction, " +
			"so of two concurrent updates of different fields of one document one can be lost",
	})
}
