package merge

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/scalelab/scalelab/engine/null"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
	"github.com/scalelab/scalelab/runner"
	_ "github.com/scalelab/scalelab/scenario/ycsb"
	"github.com/scalelab/scalelab/segment"
)

// runSegments runs n segments of one ycsb test in this process, started
// at one instant, and returns their directories.
func runSegments(t *testing.T, n int, engine string, sets []string, slos ...string) []string {
	t.Helper()
	return runSegmentsOf(t, n, func(seg segment.Segment, out string) *runner.Options {
		return &runner.Options{Scenario: "ycsb", Engine: engine, Users: 4, Given: map[string]bool{"users": true}, Duration: 1500 * time.Millisecond,
			Drain: time.Second, Seed: 1, Sets: append([]string{"ycsb.records=200"}, sets...), SLO: slos, Segment: seg, Out: out}
	})
}

// runSegmentsOf runs segments 0..n-1 of the test that opts describes (for
// one segment and its output directory) in this process, started at one
// instant, and returns their directories.
func runSegmentsOf(t *testing.T, n int, opts func(seg segment.Segment, out string) *runner.Options) []string {
	t.Helper()
	base := t.TempDir()
	at := time.Now().Add(300 * time.Millisecond)
	dirs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		dirs[i] = filepath.Join(base, fmt.Sprintf("shard-%d", i))
		o := opts(segment.Segment{Index: i, Count: n}, dirs[i])
		o.StartAt = at
		p, err := runner.NewPlan(o)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { p.Execute(context.Background(), runner.Quiet{}, io.Discard, io.Discard) })
	}
	wg.Wait()
	return dirs
}

// TestMergeSegments: the merged totals are the segments' sums, its
// percentiles those of one histogram of every value, and its series the
// segments' counts per interval.
func TestMergeSegments(t *testing.T) {
	t.Parallel()
	dirs := runSegments(t, 3, "null", []string{"ycsb.workload=a"})
	out := filepath.Join(t.TempDir(), "merged")
	doc, err := Merge(dirs, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var count, started int64
	all := metrics.NewHist()
	for _, d := range dirs {
		r := resultstest.Read(t, d)
		count += r.Totals.Count
		started += r.Totals.Started
		hl, err := metrics.ReadIntervalLog(filepath.Join(d, results.HlogFile), 0)
		if err != nil {
			t.Fatal(err)
		}
		all.Merge(hl.Hists["read"])
	}
	if doc.Status != results.StatusOK || doc.Totals.Count != count || doc.Totals.Started != started {
		t.Fatalf("merged: status %s count %d started %d; segments' sums %d %d", doc.Status, doc.Totals.Count, doc.Totals.Started, count, started)
	}
	rd := doc.Summary["read"]
	if rd.Count != all.TotalCount() || *rd.P99Ms != float64(all.ValueAtQuantile(99))/1e6 || *rd.MaxMs != float64(all.Max())/1e6 {
		t.Errorf("merged read: %d, p99 %v, max %v; one histogram: %d, %v, %v", rd.Count, *rd.P99Ms, *rd.MaxMs, all.TotalCount(),
			float64(all.ValueAtQuantile(99))/1e6, float64(all.Max())/1e6)
	}
	if doc.Merged == nil || len(doc.Merged.Shards) != 3 || doc.Segment != nil || doc.Load.Params["users"] != float64(4) && doc.Load.Params["users"] != 4 {
		t.Errorf("merged section %+v, segment %+v, load %+v", doc.Merged, doc.Segment, doc.Load.Params)
	}
	for _, f := range []string{results.RunFile, results.HlogFile, results.SeriesFile, results.ReportFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("merged directory: %v", err)
		}
	}
	again, err := results.Read(out)
	if err != nil || again.Totals.Count != count {
		t.Fatalf("merged run.json: %v %+v", err, again)
	}
}

// TestMergeRefusals: directories that are not the segments of one test,
// or a missing segment, are refused with exit code 2 saying why;
// --allow-incomplete merges the rest, marked incomplete (exit 4).
func TestMergeRefusals(t *testing.T) {
	t.Parallel()
	dirs := runSegments(t, 3, "null", nil)
	other := runSegments(t, 3, "null", []string{"ycsb.workload=c"})
	plain := t.TempDir()
	resultstest.Write(t, plain, &results.Run{Status: results.StatusOK})
	for _, c := range []struct {
		dirs []string
		want string
	}{
		{[]string{dirs[0], dirs[1], other[2]}, "not segments of the same test"},
		{[]string{dirs[0], dirs[1], dirs[1]}, "are both segment 1/3"},
		{[]string{dirs[0], dirs[2]}, "segment 1 of 3 is missing"},
		{[]string{dirs[0], dirs[1], dirs[2], plain}, "not a segment of a divided test"},
		{[]string{dirs[0], filepath.Join(plain, "nope")}, "is not a directory"},
	} {
		_, err := Merge(c.dirs, filepath.Join(t.TempDir(), "m"), Options{})
		if results.ExitCode(err) != results.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("merge %v: %v; want exit 2 saying %q", c.dirs, err, c.want)
		}
	}
	out := filepath.Join(t.TempDir(), "m")
	doc, err := Merge([]string{dirs[0], dirs[2]}, out, Options{AllowIncomplete: true})
	if results.ExitCode(err) != results.ExitUnfinished || doc == nil || doc.Status != results.StatusIncomplete ||
		!strings.Contains(doc.Error, "segment 1 of 3 is missing") || len(doc.Merged.Missing) != 1 {
		t.Fatalf("incomplete merge: %v, %+v", err, doc)
	}
	// a crashed segment: its run.json still says running
	r := resultstest.Read(t, dirs[1])
	r.Status = results.StatusRunning
	resultstest.Write(t, dirs[1], r)
	_, err = Merge(dirs, filepath.Join(t.TempDir(), "m"), Options{})
	if results.ExitCode(err) != results.ExitUsage || !strings.Contains(err.Error(), "its process died") {
		t.Errorf("merge with a crashed segment: %v", err)
	}
}

// TestMergeAuditAndSLO: a segment that lost writes fails the merged run
// (exit 1, the audit summed), and SLOs are judged on the merged result.
func TestMergeAuditAndSLO(t *testing.T) {
	t.Parallel()
	dirs := runSegments(t, 2, "null", nil)
	// segment 1 lost 2 acknowledged writes (as its read-back would say)
	for i, d := range dirs {
		r := resultstest.Read(t, d)
		r.Audit = &results.Audit{Attempted: 10, Acknowledged: 10, Checked: true, ReadBack: 10}
		if i == 1 {
			r.Audit.Lost, r.Audit.LostIDs = 2, []int64{7, 5}
			r.Status, r.ExitCode = results.StatusFailed, results.ExitCheckFailed
			r.Failures = []string{"audit: 2 acknowledged writes lost"}
		}
		resultstest.Write(t, d, r)
	}
	doc, err := Merge(dirs, filepath.Join(t.TempDir(), "m"), Options{})
	if results.ExitCode(err) != results.ExitCheckFailed || doc.Status != results.StatusFailed {
		t.Fatalf("merge of segments that lost writes: %v, status %s", err, doc.Status)
	}
	if a := doc.Audit; a == nil || a.Acknowledged != 20 || a.ReadBack != 20 || a.Lost != 2 || !a.Checked || a.LostIDs[0] != 5 {
		t.Fatalf("merged audit %+v", a)
	}
	named := false
	for _, f := range doc.Failures {
		named = named || strings.HasPrefix(f, "segment 1: audit: 2 acknowledged writes lost")
	}
	if !named {
		t.Errorf("failures %v do not name segment 1's lost writes", doc.Failures)
	}

	slos := runSegments(t, 2, "null", nil, "p99<1ns")
	doc, err = Merge(slos, filepath.Join(t.TempDir(), "m"), Options{})
	if results.ExitCode(err) != results.ExitCheckFailed {
		t.Fatalf("merge with a failed SLO: %v", err)
	}
	n := 0
	for _, f := range doc.Failures {
		if strings.HasPrefix(f, "SLO ") {
			n++
		}
	}
	if n == 0 {
		t.Errorf("the merged result judged no SLO: %v", doc.Failures)
	}
	ok := runSegments(t, 2, "null", nil, "p99<10s")
	if doc, err := Merge(ok, filepath.Join(t.TempDir(), "m"), Options{}); err != nil || doc.Status != results.StatusOK {
		t.Errorf("merge with a met SLO: %v %+v", err, doc.Failures)
	}
}

// TestCombineClientQueue: a merged run's client queue has the segments'
// slots summed, and their most waiting summed as an upper bound, said so.
func TestCombineClientQueue(t *testing.T) {
	t.Parallel()
	seg := func(i, slots, waiting int, inProcess bool) *shard {
		return &shard{run: &results.Run{Segment: &results.Segment{Index: i, Count: 2},
			ClientQueue: &results.ClientQueue{Slots: slots, MaxWaiting: waiting, InProcess: inProcess}}}
	}
	doc := &results.Run{}
	combine(doc, []*shard{seg(0, 1, 700, true), seg(1, 3, 20, false)})
	q := doc.ClientQueue
	if q == nil || q.Slots != 4 || q.MaxWaiting != 720 || !q.InProcess || !q.MaxIsBound {
		t.Fatalf("merged client queue %+v", q)
	}
	if txt := q.Text(); !strings.Contains(txt, "at most 4 operations at once") || !strings.Contains(txt, "up to 720 (at most: the sum of the segments' peaks)") {
		t.Errorf("text %q", txt)
	}
	one := &results.Run{}
	combine(one, []*shard{seg(0, 2, 5, false)})
	if q := one.ClientQueue; q == nil || q.MaxIsBound || strings.Contains(q.Text(), "sum") {
		t.Errorf("one segment's queue %+v", q)
	}
	none := &results.Run{}
	combine(none, []*shard{{run: &results.Run{Segment: &results.Segment{Index: 0, Count: 1}}}})
	if none.ClientQueue != nil {
		t.Errorf("a queue where no segment had one: %+v", none.ClientQueue)
	}
}
