// Package searchtest starts real OpenSearch and Elasticsearch clusters for
// tests: one per test (Start), or one 1-node cluster per distribution shared
// by a test binary (Shared), whose nodes stop and delete their data when the
// test binary exits. It registers the search engines' test providers
// (provider.go). Without the launcher jars or a JDK, a test fails under CI
// and is skipped otherwise, naming the install command.
package searchtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/internal/testenv"
)

// Heap is the JVM heap of a test node.
const Heap = "384m"

// JVMOptions are the extra JVM flags of the nodes Start starts: C1 only,
// which starts a node in less than half the time on a loaded machine (19 s
// instead of 46 s) for short tests. Shared clusters, which serve whole
// conformance suites, keep the full JIT: C2's code serves reads about 1.7
// times faster once warm.
const JVMOptions = "-XX:TieredStopAtLevel=1"

// UpTimeout bounds a test cluster's start: JVMs start slowly on a loaded
// machine.
const UpTimeout = 5 * time.Minute

// Require skips (or under CI fails) t when the engine's launcher or JDK is
// missing.
func Require(t testing.TB, engineName string) {
	t.Helper()
	if err := search.Installed(engineName); err != nil {
		testenv.Unavailable(t, engineName, err, "make java")
	}
}

// Start starts a cluster of spec.Nodes nodes (spec.Roles, spec.Heap or Heap)
// for t and stops it when t ends, checking that no node process is left.
func Start(t testing.TB, engineName string, spec cluster.Spec) *cluster.State {
	t.Helper()
	Require(t, engineName)
	spec.Engine = engineName
	spec.Options = withOption(spec.Options, "jvm_options", JVMOptions)
	return enginetest.StartCluster(t, spec, Heap, UpTimeout)
}

// Stop stops every node of st and checks that nothing is left.
func Stop(st *cluster.State) error { return enginetest.StopCluster(st) }

// Gone checks that no process of st is alive and nothing listens on its
// ports.
func Gone(st *cluster.State) error { return enginetest.Gone(st) }

func withOption(opts map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for key, val := range opts {
		out[key] = val
	}
	return out
}

var shared enginetest.Shared[string, string]

// Shared returns the target of a 1-node cluster of engineName: the one
// started for the whole test run (scripts/test-clusters.sh) when there is
// one, else one started on first use and shared by the whole test binary,
// whose node stops and deletes its data when the test binary exits. Safe for concurrent use; the two
// distributions start in parallel.
func Shared(engineName string) (string, error) {
	return shared.Get(engineName, func() (string, error) {
		if st, ok := enginetest.CICluster(engineName); ok {
			return st.Target, nil // started once for the whole test run
		}
		if err := search.Installed(engineName); err != nil {
			return "", fmt.Errorf("shared %s test cluster: %w", engineName, err)
		}
		spec := cluster.Spec{Engine: engineName, Nodes: 1, Options: map[string]string{"delete_on_exit": "true"}}
		st, err := enginetest.UpShared(fmt.Sprintf("shared %s test cluster", engineName), "searchtest", engineName, spec, Heap, UpTimeout, false)
		if err != nil {
			return "", err
		}
		return st.Target, nil
	})
}
