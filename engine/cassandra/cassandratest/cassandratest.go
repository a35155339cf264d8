// Package cassandratest starts real Cassandra rings for tests: one per test
// (Start), or one ring per node count shared by a whole test binary
// (Shared), whose nodes stop when the test binary exits (a watchdog in the
// launcher). A node start costs tens of seconds on a loaded machine, so
// tests share rings and isolate themselves by keyspace (Keyspace). Tests
// call Require first: without the launcher jars or a JDK 11-17, a test
// fails under CI=true and is skipped otherwise, naming the install command.
package cassandratest

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
	"github.com/scalelab/scalelab/engine/cassandra"
)

// Heap is the JVM heap of a test node.
const Heap = "512m"

// UpTimeout bounds a test ring's start: three JVMs start slowly on a
// loaded 2-core machine.
const UpTimeout = 8 * time.Minute

// InCI reports whether the tests run under CI (CI=true), where a missing
// jar or JDK fails a test instead of skipping it.
func InCI() bool { return os.Getenv("CI") == "true" }

// Require skips (or under CI fails) t when the launcher or a JDK is
// missing.
func Require(t testing.TB) {
	t.Helper()
	if err := cassandra.Installed(); err != nil {
		if InCI() {
			t.Fatalf("cassandra: %v", err)
		}
		t.Skipf("cassandra: %v (run `make java`)", err)
	}
}

var seq atomic.Int64

// Keyspace returns a keyspace name unique in this machine's test runs, for
// a test to isolate its tables on a shared ring.
func Keyspace() string { return fmt.Sprintf("t%d_%d", os.Getpid(), seq.Add(1)) }

// Start starts a ring of spec.Nodes nodes for t and stops it when t ends,
// checking that no node process or port is left.
func Start(t testing.TB, spec cluster.Spec) *cluster.State {
	t.Helper()
	Require(t)
	st, err := up(t.TempDir(), spec)
	t.Cleanup(func() {
		if err := Stop(st); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatalf("start cassandra ring: %v", err)
	}
	return st
}

func up(dir string, spec cluster.Spec) (*cluster.State, error) {
	spec.Engine = cassandra.Name
	if spec.Name == "" {
		spec.Name = fmt.Sprintf("t%d-%d", os.Getpid(), seq.Add(1))
	}
	if spec.Heap == "" {
		spec.Heap = Heap
	}
	if spec.Options == nil {
		spec.Options = map[string]string{}
	}
	spec.Options["exit_with_pid"] = strconv.Itoa(os.Getpid())
	st := &cluster.State{Name: spec.Name, Engine: cassandra.Name, Created: time.Now().UTC(), Dir: dir, Params: map[string]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), UpTimeout)
	defer cancel()
	start := time.Now()
	if err := (&cassandra.Provisioner{}).Up(ctx, spec, st); err != nil {
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

// sharedEntry is the shared ring of one node count, started once.
type sharedEntry struct {
	once sync.Once
	st   *cluster.State
	err  error
}

var (
	sharedMu      sync.Mutex
	sharedEntries = map[int]*sharedEntry{}
	cleanOnce     sync.Once
)

// Shared returns a ring of the given node count started on first use and
// shared by the whole test binary; its nodes stop when the test binary
// exits, and the next test binary removes their directories. Safe for
// concurrent use.
func Shared(nodes int) (*cluster.State, error) {
	sharedMu.Lock()
	e, ok := sharedEntries[nodes]
	if !ok {
		e = &sharedEntry{}
		sharedEntries[nodes] = e
	}
	sharedMu.Unlock()
	e.once.Do(func() {
		cleanOnce.Do(cleanStale)
		e.st, e.err = startShared(nodes)
	})
	return e.st, e.err
}

func startShared(nodes int) (*cluster.State, error) {
	err := cassandra.Installed()
	var st *cluster.State
	if err == nil {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("scalelab-cassandratest-%d-%d", os.Getpid(), nodes))
		if err = os.MkdirAll(dir, 0o700); err == nil {
			st, err = up(dir, cluster.Spec{Nodes: nodes})
		}
	}
	if err != nil {
		if st != nil {
			_ = cluster.StopAll(st, 10*time.Second)
		}
		return nil, fmt.Errorf("shared %d-node cassandra test ring: %w", nodes, err)
	}
	return st, nil
}

// cleanStale removes the directories of shared rings of test binaries
// that have exited.
func cleanStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "scalelab-cassandratest-*"))
	for _, d := range dirs {
		parts := strings.Split(filepath.Base(d), "-")
		if len(parts) < 4 {
			continue
		}
		if pid, err := strconv.Atoi(parts[2]); err == nil && !cluster.Alive(pid) {
			_ = os.RemoveAll(d)
		}
	}
}

// UseShared makes the cassandra engine open the shared ring of the given
// node count (as its scalelab superuser) when a test gives no target.
// Call it from an init function of a test file, before any test runs.
func UseShared(nodes int) {
	cassandra.DefaultTarget = func() (string, string, string, error) {
		st, err := Shared(nodes)
		if err != nil {
			return "", "", "", err
		}
		pw, err := st.Password()
		if err != nil {
			return "", "", "", err
		}
		return st.Target, st.User, pw, nil
	}
}
