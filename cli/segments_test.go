package cli

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// buildBinary builds scalelab for tests that run it as separate
// processes.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "scalelab")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/scalelab").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// runSegments runs args as n segment processes started at one instant
// and returns their directories.
func runSegments(t *testing.T, bin, base string, n int, args ...string) []string {
	t.Helper()
	startAt := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	dirs := make([]string, n)
	outs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		dirs[i] = filepath.Join(base, fmt.Sprintf("shard-%d", i))
		a := append(append([]string{"run"}, args...), "--segment", fmt.Sprintf("%d/%d", i, n), "--start-at", startAt, "--out", dirs[i], "--progress", "off")
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(bin, a...).CombinedOutput()
			outs[i], errs[i] = string(out), err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("segment %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	return dirs
}

// merged merges dirs with the binary and returns the merged run.
func merged(t *testing.T, bin, out string, dirs ...string) *results.Run {
	t.Helper()
	b, err := exec.Command(bin, append(append([]string{"merge"}, dirs...), "--out", out)...).CombinedOutput()
	if err != nil {
		t.Fatalf("merge: %v\n%s", err, b)
	}
	return resultstest.Read(t, out)
}

// within reports whether got is within frac of want.
func within(got, want, frac float64) bool { return math.Abs(got-want) <= frac*want }

// TestSegmentsMergeEqualsWhole runs the same closed, rate and phases tests
// once whole and once as 4 segment processes started at one --start-at,
// merges the segments, and compares: totals, rates and concurrent sessions
// equal the whole run's within noise, and the merged percentiles are those
// of one histogram holding every segment's values.
func TestSegmentsMergeEqualsWhole(t *testing.T) {
	skipShort(t, "builds the binary and runs processes")
	bin := buildBinary(t)
	// one SQLite file, loaded once, read by every process
	db := filepath.Join(t.TempDir(), "ycsb.db")
	if out, err := exec.Command(bin, "run", "ycsb", "--target", db, "--set", "ycsb.records=500", "--load-only", "--out", filepath.Join(t.TempDir(), "load"), "--progress", "off").CombinedOutput(); err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	common := []string{"ycsb", "--target", db, "--set", "ycsb.workload=c", "--set", "ycsb.records=500", "--set", "ycsb.load=false", "--duration", "4s"}
	for _, c := range []struct {
		model string
		args  []string
		frac  float64 // allowed relative difference of the totals
	}{
		// 16 users, each an operation per ~100 ms: about 160 ops/s; the
		// think time dominates each cycle, so a busy machine's slower
		// operations move the totals little
		{"closed", []string{"--users", "16", "--think", "100ms"}, 0.15},
		{"rate", []string{"--rate", "400/s", "--users", "8"}, 0.05},
		// 4 s at 100 sessions/s: about 150 concurrent sessions at the peak
		{"phases", []string{"--phases", "4s@100/s", "--think", "100ms"}, 0.3},
	} {
		t.Run(c.model, func(t *testing.T) {
			base := t.TempDir()
			args := append(append([]string{}, common...), c.args...)
			wholeDir := filepath.Join(base, "whole")
			if out, err := exec.Command(bin, append(append([]string{"run"}, args...), "--out", wholeDir, "--progress", "off")...).CombinedOutput(); err != nil {
				t.Fatalf("whole: %v\n%s", err, out)
			}
			whole := resultstest.Read(t, wholeDir)
			dirs := runSegments(t, bin, base, 4, args...)
			var shardCount int64
			for i, d := range dirs {
				r := resultstest.Read(t, d)
				if r.Segment == nil || r.Segment.Index != i || r.Segment.Count != 4 || r.Segment.StartAt == nil {
					t.Fatalf("segment %d: run.json segment %+v", i, r.Segment)
				}
				if r.Segment.StartLateMs > 1000 {
					t.Errorf("segment %d started %.0f ms late", i, r.Segment.StartLateMs)
				}
				shardCount += r.Totals.Count
			}
			m := merged(t, bin, filepath.Join(base, "merged"), dirs...)
			if m.Status != results.StatusOK || m.Merged == nil {
				t.Fatalf("merged: status %s, merged %+v", m.Status, m.Merged)
			}
			t.Logf("%s: whole %d ops (%.1f/s, max sessions %d, p99 read %v ms); 4 segments merged %d ops (%.1f/s, max sessions %d, p99 read %v ms)",
				c.model, whole.Totals.Count, whole.Totals.ThroughputPerS, whole.MaxSessions, deref(whole.Summary["read"].P99Ms),
				m.Totals.Count, m.Totals.ThroughputPerS, m.MaxSessions, deref(m.Summary["read"].P99Ms))
			if m.Totals.Count != shardCount {
				t.Errorf("merged count %d, the segments' sum %d", m.Totals.Count, shardCount)
			}
			if !within(float64(m.Totals.Count), float64(whole.Totals.Count), c.frac) {
				t.Errorf("merged count %d, whole run %d (allowed ±%.0f%%)", m.Totals.Count, whole.Totals.Count, 100*c.frac)
			}
			if !within(m.Totals.ThroughputPerS, whole.Totals.ThroughputPerS, c.frac) {
				t.Errorf("merged throughput %.1f/s, whole run %.1f/s", m.Totals.ThroughputPerS, whole.Totals.ThroughputPerS)
			}
			if c.model == "phases" && !within(float64(m.MaxSessions), float64(whole.MaxSessions), c.frac) {
				t.Errorf("merged concurrent sessions %d, whole run %d", m.MaxSessions, whole.MaxSessions)
			}
			// the merged percentiles are those of every segment's values in one histogram
			all := metrics.NewHist()
			for _, d := range dirs {
				hl, err := metrics.ReadIntervalLog(filepath.Join(d, results.HlogFile), 0)
				if err != nil {
					t.Fatal(err)
				}
				all.Merge(hl.Hists["read"])
			}
			got := m.Summary["read"]
			if got.Count != all.TotalCount() {
				t.Fatalf("merged read count %d, the segments' histograms hold %d", got.Count, all.TotalCount())
			}
			for _, q := range []struct {
				name string
				ms   *float64
				pct  float64
			}{{"p50", got.P50Ms, 50}, {"p99", got.P99Ms, 99}} {
				if want := float64(all.ValueAtQuantile(q.pct)) / 1e6; q.ms == nil || math.Abs(*q.ms-want) > 1e-6 {
					t.Errorf("merged %s %v ms, one histogram of every value %.4f ms", q.name, q.ms, want)
				}
			}
			page, err := os.ReadFile(filepath.Join(base, "merged", results.ReportFile))
			if err != nil || !strings.Contains(string(page), "merged from 4 of 4 segments") {
				t.Errorf("merged report: %v", err)
			}
		})
	}
}

// TestSegmentsAuditedLogsOnPostgres: an audited logs run on a local
// PostgreSQL, loaded once and run as 4 segments: every segment's writes
// are read back, the merged audit counts them all with none lost, and a
// merge with one segment's directory deleted says which is missing.
func TestSegmentsAuditedLogsOnPostgres(t *testing.T) {
	skipShort(t, "builds the binary and starts PostgreSQL")
	needPostgres(t)
	home := t.TempDir()
	t.Setenv("SCALELAB_HOME", home)
	bin := buildBinary(t)
	upCluster(t, "postgres", "pgseg")
	base := t.TempDir()
	env := append(os.Environ(), "SCALELAB_HOME="+home)
	load := exec.Command(bin, "run", "logs", "--cluster", "pgseg", "--load-only", "--set", "logs.records=2000", "--out", filepath.Join(base, "setup"), "--progress", "off")
	load.Env = env
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	t.Setenv("SCALELAB_HOME", home)
	dirs := runSegments(t, bin, base, 4, "logs", "--cluster", "pgseg", "--set", "logs.records=2000", "--users", "4", "--duration", "3s")
	var written int64
	for i, d := range dirs {
		r := resultstest.Read(t, d)
		if r.Audit == nil || !r.Audit.Checked || r.Audit.Acknowledged == 0 || r.Audit.Lost != 0 {
			t.Fatalf("segment %d: audit %+v", i, r.Audit)
		}
		written += r.Audit.Acknowledged
	}
	m := merged(t, bin, filepath.Join(base, "merged"), dirs...)
	if m.Audit == nil || !m.Audit.Checked || m.Audit.Acknowledged != written || m.Audit.Lost != 0 || m.Audit.ReadBack < written {
		t.Fatalf("merged audit %+v, want %d acknowledged, all read back, none lost", m.Audit, written)
	}
	if m.Status != results.StatusOK || m.ExitCode != 0 {
		t.Fatalf("merged status %s exit %d: %v", m.Status, m.ExitCode, m.Failures)
	}
	if err := os.RemoveAll(dirs[2]); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "merge", dirs[0], dirs[1], dirs[3], "--out", filepath.Join(base, "merged2")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "2") || !strings.Contains(string(out), "missing") {
		t.Fatalf("merge without segment 2: %v\n%s", err, out)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
