package cluster

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Runs recorded on a cluster are listed by start, the asking run's own
// record left out, a torn last line skipped.
func TestRunsAfter(t *testing.T) {
	t.Parallel()
	st := &State{Name: "c1", Dir: t.TempDir()}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, dir := range []string{"/r/a", "/r/b", "/r/c"} {
		if err := st.RecordRun(t0.Add(time.Duration(i)*time.Minute), dir); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(filepath.Join(st.Dir, runsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"start":"2030-01-0`)
	f.Close()
	later, err := st.RunsAfter(t0, "/r/b")
	if err != nil {
		t.Fatal(err)
	}
	if len(later) != 1 || later[0].Dir != "/r/c" {
		t.Fatalf("runs after the first, other than b: %+v, want c only", later)
	}
	if none, err := (&State{Name: "c2", Dir: t.TempDir()}).RunsAfter(t0, "/r/a"); err != nil || len(none) != 0 {
		t.Fatalf("no runs recorded: %+v, %v", none, err)
	}
}
