package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
)

// UpCluster starts a local cluster of spec with its engine's provisioner
// in dir, for tests: named after the test binary's process when spec has
// no name, with heap when spec has none, and with exit_with_pid (where the
// provisioner takes it) so that JVM nodes stop when the test binary exits. It records the start time in
// Params["up_seconds"]. On error the state is returned too, for StopCluster.
func UpCluster(dir string, spec cluster.Spec, heap string, timeout time.Duration) (*cluster.State, error) {
	prov, err := cluster.Lookup(spec.Engine)
	if err != nil {
		return nil, err
	}
	if spec.Name == "" {
		spec.Name = strings.ReplaceAll(Name(), "_", "-")
	}
	if spec.Heap == "" && cluster.Declares(prov, cluster.OptHeap) {
		spec.Heap = heap
	}
	opts := map[string]string{}
	for k, v := range spec.Options {
		opts[k] = v
	}
	if cluster.Declares(prov, cluster.OptExitWithPID) {
		opts[cluster.OptExitWithPID] = strconv.Itoa(os.Getpid())
	}
	spec.Options = opts
	st := &cluster.State{Name: spec.Name, Engine: spec.Engine, Created: time.Now().UTC(), Dir: dir, Params: map[string]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	if err := prov.Up(ctx, spec, st); err != nil {
		return st, fmt.Errorf("start %s test cluster: %w", spec.Engine, err)
	}
	st.Params["up_seconds"] = fmt.Sprintf("%.1f", time.Since(start).Seconds())
	return st, nil
}

// UpShared is UpCluster for a cluster that the whole test binary shares,
// in SharedDir(kind, key), with what started of it stopped on error; what
// names it in errors ("shared redis test server"). With stopAtExit its
// nodes stop when the test binary ends (Main, AtExit); otherwise they stop
// when it exits (exit_with_pid).
func UpShared(what, kind, key string, spec cluster.Spec, heap string, timeout time.Duration, stopAtExit bool) (*cluster.State, error) {
	dir, err := SharedDir(kind, key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	st, err := UpCluster(dir, spec, heap, timeout)
	if err != nil {
		if st != nil {
			_ = cluster.StopAll(st, 10*time.Second)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if stopAtExit {
		AtExit(func() { _ = cluster.StopAll(st, 10*time.Second) })
	}
	return st, nil
}

// StartCluster is UpCluster for one test: in the test's temporary
// directory, stopped (and checked gone) when t ends.
func StartCluster(t testing.TB, spec cluster.Spec, heap string, timeout time.Duration) *cluster.State {
	t.Helper()
	st, err := UpCluster(t.TempDir(), spec, heap, timeout)
	t.Cleanup(func() {
		if err := StopCluster(st); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// StopCluster stops every node of st (TERM, then KILL after 30 s) and
// checks that no node process or port is left (Gone).
func StopCluster(st *cluster.State) error {
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

// Shared starts things once per key for the whole test binary: the first
// call of Get for a key runs start, later calls (concurrent ones wait)
// return its result.
type Shared[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]*sharedEntry[V]
}

type sharedEntry[V any] struct {
	once sync.Once
	v    V
	err  error
}

// Get returns the value started for key.
func (s *Shared[K, V]) Get(key K, start func() (V, error)) (V, error) {
	s.mu.Lock()
	if s.entries == nil {
		s.entries = map[K]*sharedEntry[V]{}
	}
	e, ok := s.entries[key]
	if !ok {
		e = &sharedEntry[V]{}
		s.entries[key] = e
	}
	s.mu.Unlock()
	e.once.Do(func() { e.v, e.err = start() })
	return e.v, e.err
}

// SharedDir returns (creating it) the directory of a cluster shared by this
// test binary: kind-PID-key under the temporary directory. Directories of
// test binaries that have exited are removed first, once per kind.
func SharedDir(kind, key string) (string, error) {
	cleanStale(kind)
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("scalelab-%s-%d-%s", kind, os.Getpid(), key))
	return dir, os.MkdirAll(dir, 0o700)
}

var cleaned sync.Map

// cleanStale removes the shared-cluster directories of kind whose test
// binary has exited.
func cleanStale(kind string) {
	if _, done := cleaned.LoadOrStore(kind, true); done {
		return
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "scalelab-"+kind+"-*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), "scalelab-"+kind+"-")
		pidText, _, _ := strings.Cut(rest, "-")
		if pid, err := strconv.Atoi(pidText); err == nil && !cluster.Alive(pid) {
			_ = os.RemoveAll(d)
		}
	}
}

// CICluster returns the cluster of engineName that scripts/test-clusters.sh
// started for the whole test run ($SCALELAB_TEST_CLUSTERS/ci-ENGINE), if
// there is one whose nodes are alive.
func CICluster(engineName string) (*cluster.State, bool) {
	dir := os.Getenv("SCALELAB_TEST_CLUSTERS")
	if dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(dir, "ci-"+engineName, "cluster.json"))
	if err != nil {
		return nil, false
	}
	var st cluster.State
	if json.Unmarshal(b, &st) != nil || len(st.Nodes) == 0 {
		return nil, false
	}
	for _, n := range st.Nodes {
		if !cluster.Alive(n.PID) {
			return nil, false
		}
	}
	return &st, true
}

// LocalServerTimeout bounds the start of a LocalServer.
const LocalServerTimeout = time.Minute

// LocalServer is the one server of an engine (redis, memcached) that a
// test binary shares: started on first use as `scalelab cluster up`
// starts one, and stopped when the test binary ends (Main).
type LocalServer struct {
	// Spec is the server's cluster spec; its Engine names it.
	Spec cluster.Spec
	// Binary finds the server's binary; its error says what is missing.
	Binary func() (string, error)
	// Kind names the server's directory (SharedDir).
	Kind string

	shared Shared[string, *cluster.State]
}

// Shared returns the server, started on first use; without the server
// binary, the error is Binary's.
func (s *LocalServer) Shared() (*cluster.State, error) {
	return s.shared.Get("server", func() (*cluster.State, error) {
		if _, err := s.Binary(); err != nil {
			return nil, err
		}
		return UpShared("shared "+s.Spec.Engine+" test server", s.Kind, "server", s.Spec, "", LocalServerTimeout, true)
	})
}

// Get returns the server, failing t under CI and skipping it elsewhere
// when it cannot run.
func (s *LocalServer) Get(t testing.TB) *cluster.State {
	t.Helper()
	st, err := s.Shared()
	if err != nil {
		Unavailable(t, s.Spec.Engine, err, "make setup")
	}
	return st
}
