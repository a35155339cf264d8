// Package cassandratest starts real Cassandra rings for tests: one per test
// (Start), or one ring per node count shared by a test binary (Shared),
// whose nodes stop when the test binary exits. It registers the cassandra
// engine's test provider (provider.go). Without the launcher jars or a JDK,
// a test fails under CI and is skipped otherwise, naming the install
// command.
package cassandratest

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/cassandra"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/internal/testenv"
)

// Heap is the JVM heap of a test node.
const Heap = "512m"

// UpTimeout bounds a test ring's start: three JVMs start slowly on a
// loaded 2-core machine.
const UpTimeout = 8 * time.Minute

// Require skips (or under CI fails) t when the launcher or a JDK is
// missing.
func Require(t testing.TB) {
	t.Helper()
	if err := cassandra.Installed(); err != nil {
		testenv.Unavailable(t, cassandra.Name, err, "make java")
	}
}

// Start starts a ring of spec.Nodes nodes for t and stops it when t ends,
// checking that no node process or port is left.
func Start(t testing.TB, spec cluster.Spec) *cluster.State {
	t.Helper()
	Require(t)
	spec.Engine = cassandra.Name
	return enginetest.StartCluster(t, spec, Heap, UpTimeout)
}

// Stop stops every node of st and checks that nothing is left.
func Stop(st *cluster.State) error { return enginetest.StopCluster(st) }

var shared enginetest.Shared[int, *cluster.State]

// Shared returns a ring of the given node count: for 1 node the one
// started for the whole test run (scripts/test-clusters.sh) when there is
// one, else a ring started on first use and shared by the whole test
// binary, whose nodes stop when the test binary exits (the next test
// binary removes their directories). Safe for concurrent use.
func Shared(nodes int) (*cluster.State, error) {
	return shared.Get(nodes, func() (*cluster.State, error) {
		if st, ok := enginetest.CICluster(cassandra.Name); ok && nodes == 1 {
			return st, nil // started once for the whole test run
		}
		if err := cassandra.Installed(); err != nil {
			return nil, fmt.Errorf("shared %d-node cassandra test ring: %w", nodes, err)
		}
		return enginetest.UpShared(fmt.Sprintf("shared %d-node cassandra test ring", nodes), "cassandratest", strconv.Itoa(nodes),
			cluster.Spec{Engine: cassandra.Name, Nodes: nodes}, Heap, UpTimeout, false)
	})
}
