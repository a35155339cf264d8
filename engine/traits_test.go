package engine_test

import (
	"testing"

	"github.com/scalelab/scalelab/engine"
	_ "github.com/scalelab/scalelab/engine/cassandra"
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
	if !engine.FollowsAnnounced("cassandra") || engine.FollowsAnnounced("postgres") || engine.FollowsAnnounced("nosuch") {
		t.Error("only cassandra follows the addresses its nodes announce")
	}
}
