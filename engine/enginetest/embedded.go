package enginetest

import (
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/memory"
	"github.com/scalelab/scalelab/engine/null"
	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/setting"
)

// The embedded engines: each Open is a new store (a new in-process map, a
// new SQLite file in the test's temporary directory).
func init() {
	for _, name := range []string{memory.Name, null.Name, sqlite.Name} {
		Register(Provider{Engine: name, Open: func(t testing.TB, set *setting.Set) engine.Conn {
			return OpenEngine(t, name, engine.Config{Settings: set, Dir: t.TempDir()})
		}})
	}
}
