package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// age makes the streamed files look written a while ago, as after a crash.
func age(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Minute)
	for _, f := range []string{results.HlogFile, results.SeriesFile} {
		_ = os.Chtimes(filepath.Join(dir, f), old, old)
	}
}

func TestRebuildCrashedRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    synth
		torn bool
	}{
		{"closed", synth{intervals: 6, ops: []string{"read", "update"}, perOp: 250, errEvery: 10, status: results.StatusRunning}, false},
		{"open with warm-up and a torn line", synth{intervals: 9, ops: []string{"get", "post"}, perOp: 300, errEvery: 7, open: true, warmup: 3, status: results.StatusRunning}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, totals := tc.s.write(t, dir)
			if tc.torn {
				for _, f := range []string{results.HlogFile, results.SeriesFile} {
					fh, err := os.OpenFile(filepath.Join(dir, f), os.O_APPEND|os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					fh.WriteString("Tag=get,9.000,1.000,3.1,HISTFAAAA")
					fh.Close()
				}
			}
			age(t, dir)
			r, rebuilt, err := Rebuild(dir)
			if err != nil || !rebuilt {
				t.Fatalf("rebuilt %v, err %v", rebuilt, err)
			}
			back := resultstest.Read(t, dir)
			for _, doc := range []*results.Run{r, back} {
				if doc.Status != results.StatusIncomplete || doc.ExitCode != results.ExitUnfinished || !strings.Contains(doc.Error, "rebuilt") {
					t.Fatalf("status %s exit %d error %q", doc.Status, doc.ExitCode, doc.Error)
				}
				if tc.torn && !strings.Contains(doc.Error, "torn") {
					t.Errorf("no note of the torn line: %q", doc.Error)
				}
				want := float64(tc.s.intervals - tc.s.warmup)
				if doc.MeasuredS < want-0.01 || doc.MeasuredS > want+0.01 || doc.Intervals != tc.s.intervals {
					t.Errorf("measured %.2f s over %d intervals, want %.0f s, %d", doc.MeasuredS, doc.Intervals, want, tc.s.intervals)
				}
				for op, tot := range totals {
					s, ok := doc.Summary[op]
					if !ok {
						t.Fatalf("no summary for %s", op)
					}
					if s.Count != tot.Lat.TotalCount() || s.Errors != tot.Errors() || s.ErrorsByClass[unknownClass] != s.Errors ||
						s.Late != tot.Late || s.Started != s.Count+s.Errors || s.P99Ms == nil {
						t.Errorf("%s: count %d errors %d late %d, want %d %d %d", op, s.Count, s.Errors, s.Late, tot.Lat.TotalCount(), tot.Errors(), tot.Late)
					}
					if wantTput := float64(s.Count) / want; s.ThroughputPerS < wantTput*0.99 || s.ThroughputPerS > wantTput*1.01 {
						t.Errorf("%s: throughput %.1f, want %.1f", op, s.ThroughputPerS, wantTput)
					}
					if (s.Service != nil) != tc.s.open {
						t.Errorf("%s: service %v in an open=%v model", op, s.Service, tc.s.open)
					}
				}
			}
			// a second report leaves the rebuilt run alone
			if _, again, err := Rebuild(dir); err != nil || again {
				t.Errorf("second rebuild: %v %v", again, err)
			}
		})
	}
}

func TestRebuildBeforeMeasuring(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := &results.Run{Status: results.StatusRunning, Scenario: "ycsb", Engine: "memory", Load: results.Load{Model: "closed"}}
	resultstest.Write(t, dir, r)
	got, rebuilt, err := Rebuild(dir)
	if err != nil || !rebuilt || got.Status != results.StatusIncomplete || len(got.Summary) != 0 || !strings.Contains(got.Error, "before measuring") {
		t.Fatalf("rebuilt %v err %v: %+v", rebuilt, err, got)
	}
	if err := WriteHTML(filepath.Join(dir, results.ReportFile), got, dir); err != nil {
		t.Fatal(err)
	}
}

func TestRebuildLeavesFinishedRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	synth{intervals: 2, ops: []string{"read"}, perOp: 10}.write(t, dir)
	before, _ := os.ReadFile(filepath.Join(dir, results.RunFile))
	if _, rebuilt, err := Rebuild(dir); err != nil || rebuilt {
		t.Fatalf("rebuilt %v err %v", rebuilt, err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, results.RunFile))
	if string(before) != string(after) {
		t.Error("run.json of a finished run changed")
	}
	if _, _, err := Rebuild(filepath.Join(dir, "nope")); err == nil {
		t.Error("no error for a directory without run.json")
	}
}

// TestRebuildRefusesALiveRun: a log still growing means the run is alive.
func TestRebuildRefusesALiveRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	synth{intervals: 2, ops: []string{"read"}, perOp: 10, status: results.StatusRunning}.write(t, dir)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
				fh, err := os.OpenFile(filepath.Join(dir, results.HlogFile), os.O_APPEND|os.O_WRONLY, 0)
				if err == nil {
					fh.WriteString("#\n")
					fh.Close()
				}
			}
		}
	}()
	_, rebuilt, err := Rebuild(dir)
	close(stop)
	<-done
	if !errors.Is(err, ErrRunInProgress) || rebuilt {
		t.Fatalf("rebuilt %v err %v", rebuilt, err)
	}
}
