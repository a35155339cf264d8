package pgtest

import (
	"context"
	"sync"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/setting"
)

var (
	sharedMu   sync.Mutex
	shared     *Cluster
	sharedErr  error
	sharedDone bool
)

// Shared returns the cluster the test binary shares: the one Main started,
// else a primary started on first use and stopped by enginetest.Main.
func Shared() (*Cluster, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if !sharedDone {
		sharedDone = true
		shared, sharedErr = Start(0, FastSettings)
		if sharedErr == nil {
			c := shared
			enginetest.AtExit(func() { _ = c.Stop() })
		}
	}
	return shared, sharedErr
}

// setShared makes c the shared cluster (Main's).
func setShared(c *Cluster) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	shared, sharedErr, sharedDone = c, nil, true
}

// The postgres provider: a fresh database on the shared cluster per store.
func init() {
	enginetest.Register(enginetest.Provider{
		Engine: postgres.Name,
		Open: func(t testing.TB, set *setting.Set) engine.Conn {
			c, err := Shared()
			if err != nil {
				enginetest.Unavailable(t, postgres.Name, err, "install PostgreSQL 15: make setup")
			}
			return enginetest.OpenEngine(t, postgres.Name, engine.Config{Target: c.NewDatabase(t), Settings: set, Cluster: c.State})
		},
		Settle: func(t testing.TB, c engine.Conn) {
			if err := c.(*postgres.Conn).WaitReplicas(context.Background()); err != nil {
				t.Fatal(err)
			}
		},
	})
}
