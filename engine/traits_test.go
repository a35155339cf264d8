package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/scalelab/scalelab/engine"
	_ "github.com/scalelab/scalelab/engine/cassandra"
	_ "github.com/scalelab/scalelab/engine/memory"
	_ "github.com/scalelab/scalelab/engine/postgres"
	_ "github.com/scalelab/scalelab/engine/sqlite"
)

// TestTraits: the engines that state a trait have it, the others and an
// unknown name do not, and the default engine keeps its store in a file.
func TestTraits(t *testing.T) {
	if !engine.HasFileTarget(engine.Default) {
		t.Errorf("the default engine %s has no file target", engine.Default)
	}
	if engine.HasFileTarget("postgres") || engine.HasFileTarget("nosuch") {
		t.Error("postgres or an unknown engine reads as a file store")
	}
	if !engine.DataInProcess("memory", "") || engine.DataInProcess("sqlite", "") || engine.DataInProcess("postgres", "") || engine.DataInProcess("nosuch", "") {
		t.Error("only the memory engine keeps a run's data in the run's process alone")
	}
	if f, ok := engine.StoreFile("sqlite", engine.Config{Dir: "d"}); !ok || f != filepath.Join("d", "sqlite.db") {
		t.Errorf("sqlite's store file in its results directory: %q %v", f, ok)
	}
	if f, ok := engine.StoreFile("sqlite", engine.Config{Dir: "d", Target: "t.db"}); !ok || f != "t.db" {
		t.Errorf("sqlite's store file of a target: %q %v", f, ok)
	}
	if _, ok := engine.StoreFile("memory", engine.Config{Dir: "d"}); ok {
		t.Error("the memory engine has a store file")
	}
	if !engine.FollowsAnnounced("cassandra") || engine.FollowsAnnounced("postgres") || engine.FollowsAnnounced("nosuch") {
		t.Error("only cassandra follows the addresses its nodes announce")
	}
}
