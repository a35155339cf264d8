package logs_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/segment"
)

// TestSegmentsShareOneTable: two segments of one logs test write into one
// SQLite table at once, each from its own range of ids: no write collides,
// no count is wrong (each segment checks the bounds it can know), and
// every acknowledged write of each segment is read back.
func TestSegmentsShareOneTable(t *testing.T) {
	db := filepath.Join(t.TempDir(), "logs.db")
	base := t.TempDir()
	sets := []string{"logs.records=1000", "sqlite.busy_timeout=5s"}
	load, err := runner.NewPlan(&runner.Options{Scenario: "logs", Engine: "sqlite", Target: db, LoadOnly: true, Sets: append([]string{"logs.load=true"}, sets...),
		Out: filepath.Join(base, "load"), Seed: 1, Drain: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load.Execute(context.Background(), runner.Quiet{}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(500 * time.Millisecond)
	docs := make([]*results.Run, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		p, err := runner.NewPlan(&runner.Options{Scenario: "logs", Engine: "sqlite", Target: db, Sets: sets, Users: 2, Given: map[string]bool{"users": true},
			Duration: 1500 * time.Millisecond, Seed: 1, Drain: time.Second, Segment: segment.Segment{Index: i, Count: 2}, StartAt: at,
			Out: filepath.Join(base, fmt.Sprintf("shard-%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			docs[i], errs[i] = p.Execute(context.Background(), runner.Quiet{}, io.Discard, io.Discard)
		}()
	}
	wg.Wait()
	for i, d := range docs {
		if errs[i] != nil || d.Status != results.StatusOK {
			t.Fatalf("segment %d: %v, status %s, failures %v", i, errs[i], d.Status, d.Failures)
		}
		if d.Audit == nil || !d.Audit.Checked || d.Audit.Acknowledged == 0 || d.Audit.Lost != 0 {
			t.Fatalf("segment %d: audit %+v", i, d.Audit)
		}
		gt := d.ScenarioReport["ground_truth"].(map[string]any)
		want := segment.Segment{Index: i, Count: 2}.Key(1000, 0)
		if gt["first_id_written"] != want {
			t.Errorf("segment %d wrote from id %v, want %d", i, gt["first_id_written"], want)
		}
		for op, s := range d.Summary {
			if n := s.ErrorsByClass["integrity"]; n > 0 {
				t.Errorf("segment %d: %s: %d integrity errors", i, op, n)
			}
		}
	}
}
