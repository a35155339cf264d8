package experiment

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestSegmentsFactor: `segments` as a factor runs the second level as 2
// local scalelab processes started at one instant and merged into the
// run's directory before the statistics; the first level runs in one.
func TestSegmentsFactor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	bin := filepath.Join(t.TempDir(), "scalelab")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/scalelab").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	src := `
scenario: ycsb
engine: "null"
load: {users: 4, think: 5ms, duration: 1500ms}
factors:
  segments: [1, 2]
repeats: 1
`
	dir := filepath.Join(t.TempDir(), "xp")
	r, _, err := runFile(t, context.Background(), src, Options{Out: dir, Executable: bin})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(r.Combinations) != 2 {
		t.Fatalf("%d combinations", len(r.Combinations))
	}
	for i, c := range r.Combinations {
		if len(c.Runs) != 1 || !c.Runs[0].Measured || c.Runs[0].ThroughputPerS <= 0 {
			t.Fatalf("combination %d: runs %+v", i, c.Runs)
		}
		doc := resultstest.Read(t, filepath.Join(dir, c.Runs[0].Dir))
		if i == 0 && doc.Merged != nil {
			t.Errorf("one segment, but merged: %+v", doc.Merged)
		}
		if i == 1 {
			if doc.Merged == nil || len(doc.Merged.Shards) != 2 {
				t.Fatalf("2 segments: merged %+v", doc.Merged)
			}
			for _, s := range []string{"shard-0", "shard-1"} {
				if _, err := os.Stat(filepath.Join(dir, c.Runs[0].Dir+SegmentsDirSuffix, s, results.RunFile)); err != nil {
					t.Errorf("segment directory: %v", err)
				}
			}
		}
	}
}
