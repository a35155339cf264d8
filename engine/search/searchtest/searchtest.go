// Package searchtest starts real OpenSearch and Elasticsearch clusters for
// tests: one per test (Start), or one 1-node cluster per distribution shared
// by a test binary (Shared), whose nodes stop and delete their data when the
// test binary exits. Tests call Require first: without the launcher jars or
// a JDK, a test fails under CI=true and is skipped otherwise, naming the
// install command.
package searchtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine/search"
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

// InCI reports whether the tests run under CI (CI=true), where a missing
// jar or JDK fails a test instead of skipping it.
func InCI() bool { return os.Getenv("CI") == "true" }

// Require skips (or under CI fails) t when the engine's launcher or JDK is
// missing.
func Require(t testing.TB, engineName string) {
	t.Helper()
	if err := search.Installed(engineName); err != nil {
		if InCI() {
			t.Fatalf("%s: %v", engineName, err)
		}
		t.Skipf("%s: %v (run `make java`)", engineName, err)
	}
}

var seq atomic.Int64

// Start starts a cluster of spec.Nodes nodes (spec.Roles, spec.Heap or Heap)
// for t and stops it when t ends, checking that no node process is left.
func Start(t testing.TB, engineName string, spec cluster.Spec) *cluster.State {
	t.Helper()
	Require(t, engineName)
	dir := t.TempDir()
	st, err := up(engineName, dir, spec, false, JVMOptions)
	t.Cleanup(func() {
		if err := Stop(st); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatalf("start %s cluster: %v", engineName, err)
	}
	return st
}

func up(engineName, dir string, spec cluster.Spec, deleteOnExit bool, jvmOptions string) (*cluster.State, error) {
	prov, err := cluster.Lookup(engineName)
	if err != nil {
		return nil, err
	}
	spec.Engine = engineName
	if spec.Name == "" {
		spec.Name = fmt.Sprintf("t%d-%d", os.Getpid(), seq.Add(1))
	}
	if spec.Heap == "" {
		spec.Heap = Heap
	}
	spec.Options = map[string]string{"exit_with_pid": strconv.Itoa(os.Getpid())}
	if jvmOptions != "" {
		spec.Options["jvm_options"] = jvmOptions
	}
	if deleteOnExit {
		spec.Options["delete_on_exit"] = "true"
	}
	st := &cluster.State{Name: spec.Name, Engine: engineName, Created: time.Now().UTC(), Dir: dir, Params: map[string]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), UpTimeout)
	defer cancel()
	start := time.Now()
	if err := prov.Up(ctx, spec, st); err != nil {
		return st, err
	}
	st.Params["up_seconds"] = fmt.Sprintf("%.1f", time.Since(start).Seconds())
	return st, nil
}

// Stop stops every node of st (TERM, then KILL after 30 s) and checks that
// no node process or port is left.
func Stop(st *cluster.State) error {
	if st == nil {
		return nil
	}
	if err := cluster.StopAll(st, 30*time.Second); err != nil {
		return err
	}
	return Gone(st)
}

// Gone checks that no process of st is alive and nothing listens on its
// ports.
func Gone(st *cluster.State) error {
	var left []string
	for _, n := range st.Nodes {
		if cluster.Alive(n.PID) {
			left = append(left, fmt.Sprintf("%s pid %d alive", n.Name, n.PID))
		}
		for purpose, p := range n.Ports {
			if cluster.Listening(fmt.Sprintf("%s:%d", n.Host, p)) {
				left = append(left, fmt.Sprintf("%s %s port %d listening", n.Name, purpose, p))
			}
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("cluster %s left behind: %s", st.Name, strings.Join(left, "; "))
	}
	return nil
}

// sharedEntry is the shared cluster of one distribution, started once.
type sharedEntry struct {
	once   sync.Once
	target string
	err    error
}

var (
	sharedMu      sync.Mutex
	sharedEntries = map[string]*sharedEntry{}
	cleanOnce     sync.Once
)

// Shared returns the target of a 1-node cluster of engineName started on
// first use and shared by the whole test binary; its node stops and deletes
// its data when the test binary exits. Safe for concurrent use; the two
// distributions start in parallel.
func Shared(engineName string) (string, error) {
	sharedMu.Lock()
	e, ok := sharedEntries[engineName]
	if !ok {
		e = &sharedEntry{}
		sharedEntries[engineName] = e
	}
	sharedMu.Unlock()
	e.once.Do(func() {
		cleanOnce.Do(cleanStale)
		e.target, e.err = startShared(engineName)
	})
	return e.target, e.err
}

func startShared(engineName string) (string, error) {
	err := search.Installed(engineName)
	var st *cluster.State
	if err == nil {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("scalelab-searchtest-%d-%s", os.Getpid(), engineName))
		if err = os.MkdirAll(dir, 0o700); err == nil {
			st, err = up(engineName, dir, cluster.Spec{Nodes: 1}, true, "")
		}
	}
	if err != nil {
		if st != nil {
			_ = cluster.StopAll(st, 10*time.Second)
		}
		return "", fmt.Errorf("shared %s test cluster: %w", engineName, err)
	}
	return st.Target, nil
}

// cleanStale removes the directories of shared clusters of test binaries
// that have exited.
func cleanStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "scalelab-searchtest-*"))
	for _, d := range dirs {
		parts := strings.SplitN(filepath.Base(d), "-", 4)
		if len(parts) < 3 {
			continue
		}
		if pid, err := strconv.Atoi(parts[2]); err == nil && !cluster.Alive(pid) {
			_ = os.RemoveAll(d)
		}
	}
}

// UseShared makes the search engines open the shared test cluster of their
// distribution when a test gives no target. Call it from an init function
// of a test file, before any test runs.
func UseShared() {
	search.DefaultTarget = Shared
}
