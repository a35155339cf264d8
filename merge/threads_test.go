package merge

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/segment"
)

// TestMergeThreadsSegments: the segments of a thread-group test each run
// their users' loops; merged, they run the whole test's Users x Loops
// operations, as a whole run does, with the segments' operations in flight
// summed into the merged concurrency.csv.
func TestMergeThreadsSegments(t *testing.T) {
	t.Parallel()
	const users, loops, n = 7, 40, 3
	base := t.TempDir()
	opts := func(seg segment.Segment, out string) *runner.Options {
		return &runner.Options{Scenario: "ycsb", Engine: "null", Users: users, RampUp: 300 * time.Millisecond, Loops: loops,
			Given: map[string]bool{"users": true, "ramp-up": true, "loops": true}, Drain: time.Second, Seed: 1,
			Sets: []string{"ycsb.records=200"}, Segment: seg, Out: out}
	}
	dirs := runSegmentsOf(t, n, opts)
	p, err := runner.NewPlan(opts(segment.Segment{}, filepath.Join(base, "whole")))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := p.Execute(context.Background(), runner.Quiet{}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(base, "merged")
	doc, err := Merge(dirs, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sumMean float64
	for i, d := range dirs {
		r := resultstest.Read(t, d)
		seg := segment.Segment{Index: i, Count: n}
		if want := seg.Share(users) * loops; r.Totals.Count != want {
			t.Errorf("segment %d ran %d operations, want its %d users x %d loops", i, r.Totals.Count, seg.Share(users), loops)
		}
		if r.Concurrency == nil {
			t.Fatalf("segment %d: no concurrency in run.json", i)
		}
		sumMean += r.Concurrency.MeanInFlight
	}
	if doc.Totals.Count != users*loops || whole.Totals.Count != users*loops {
		t.Errorf("merged %d and whole %d operations, want %d x %d = %d", doc.Totals.Count, whole.Totals.Count, users, loops, users*loops)
	}
	c := doc.Concurrency
	if c == nil || !c.MaxIsBound || c.Users != users || math.Abs(c.MeanInFlight-sumMean) > 1e-9 || c.MaxInFlight < 1 {
		t.Errorf("merged concurrency %+v, want the segments' means summed (%v), an upper-bound max >= 1 and %d users", c, sumMean, users)
	}
	if _, err := os.Stat(filepath.Join(out, results.ConcurrencyFile)); err != nil {
		t.Errorf("merged directory: %v", err)
	}
}
