package clustertest

import (
	"os"
	"testing"

	"github.com/scalelab/scalelab/cluster"
)

// Saved records st as a local cluster, its directory cluster.Dir of its
// name and its state file, without starting anything: for tests of
// commands that only read clusters' states. It returns st.
func Saved(t testing.TB, st *cluster.State) *cluster.State {
	t.Helper()
	st.Dir = cluster.Dir(st.Name)
	if err := os.MkdirAll(st.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	return st
}
