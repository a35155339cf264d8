package runner

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/results"
)

// TestDiscardUnstarted: a run refused as a configuration error removes
// its results directory only when nothing but what it put there at the
// start is in it; other exits keep it.
func TestDiscardUnstarted(t *testing.T) {
	t.Parallel()
	usage := results.WithCode(results.ExitUsage, errors.New("refused"))
	unfinished := results.WithCode(results.ExitUnfinished, errors.New("down"))
	for _, c := range []struct {
		name    string
		files   []string
		err     error
		removed bool
	}{
		{"run.json only", []string{results.RunFile}, usage, true},
		{"and its own sqlite file", []string{results.RunFile, sqlite.DefaultFile, sqlite.DefaultFile + "-wal"}, usage, true},
		{"and a file scalelab did not put there", []string{results.RunFile, "notes.txt"}, usage, false},
		{"after the load began", []string{results.RunFile, "series.csv"}, usage, false},
		{"a server that is down", []string{results.RunFile}, unfinished, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			eng, err := engine.Lookup(sqlite.Name)
			if err != nil {
				t.Fatal(err)
			}
			parent := filepath.Join(t.TempDir(), "results")
			dir := filepath.Join(parent, "r")
			p := &Plan{flags: &Options{}, eng: eng, dir: dir}
			if err := p.createDir(); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := p.discardUnstarted(c.err, io.Discard); got != c.removed {
				t.Fatalf("discardUnstarted = %v, want %v", got, c.removed)
			}
			_, err = os.Stat(dir)
			if gone := errors.Is(err, os.ErrNotExist); gone != c.removed {
				t.Errorf("directory gone %v, want %v", gone, c.removed)
			}
			// the parent the run made goes with the directory
			if _, err := os.Stat(parent); errors.Is(err, os.ErrNotExist) != c.removed {
				t.Errorf("parent: %v", err)
			}
		})
	}
}
