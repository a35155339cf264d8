package runner

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	_ "github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/results"
)

// ycsbFile is ycsb on one SQLite file that several runs share, each run
// writing its results to a directory of its own under one base.
type ycsbFile struct {
	db, base string
	sets     []string // ycsb.records and the SQLite busy timeout
}

// newYCSBFile makes the file's directory and loads records records into
// it (a load-only run named "load").
func newYCSBFile(t *testing.T, records int) *ycsbFile {
	t.Helper()
	f := &ycsbFile{db: filepath.Join(t.TempDir(), "ycsb.db"), base: t.TempDir(),
		sets: []string{"ycsb.records=" + strconv.Itoa(records), "sqlite.busy_timeout=5s"}}
	if _, err := f.plan(t, "load", Options{LoadOnly: true}).Execute(context.Background(), Quiet{}, io.Discard, io.Discard); err != nil {
		t.Fatalf("load: %v", err)
	}
	return f
}

// dir is the results directory of the run named name.
func (f *ycsbFile) dir(name string) string { return filepath.Join(f.base, name) }

// plan plans o as the run named name: ycsb on the file, seed 1, a drain of
// a second, o.Sets after the file's settings.
func (f *ycsbFile) plan(t *testing.T, name string, o Options) *Plan {
	t.Helper()
	o.Scenario, o.Engine, o.Target, o.Seed, o.Drain = "ycsb", "sqlite", f.db, 1, time.Second
	o.Out = f.dir(name)
	o.Sets = append(append([]string(nil), f.sets...), o.Sets...)
	p, err := NewPlan(&o)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// run plans and executes o as the run named name, failing t on error.
func (f *ycsbFile) run(t *testing.T, name string, o Options) *results.Run {
	t.Helper()
	doc, err := f.plan(t, name, o).Execute(context.Background(), Quiet{}, io.Discard, io.Discard)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc
}
