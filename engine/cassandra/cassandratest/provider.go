package cassandratest

import (
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/setting"
)

// The cassandra provider: a keyspace of its own per store, on the shared
// 1-node test ring.
func init() {
	enginetest.Register(enginetest.Provider{
		Engine: cassandra.Name,
		Open: func(t testing.TB, set *setting.Set) engine.Conn {
			if err := cassandra.Installed(); err != nil {
				enginetest.Unavailable(t, cassandra.Name, err, "make java")
			}
			st, err := Shared(1)
			if err != nil {
				enginetest.Unavailable(t, cassandra.Name, err, "make java")
			}
			if err := set.Apply(cassandra.KeyKeyspace + "=" + enginetest.Name()); err != nil {
				t.Fatal(err)
			}
			return enginetest.OpenEngine(t, cassandra.Name, engine.Config{Settings: set, Cluster: st})
		},
	})
}
