package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// ErrRunInProgress is returned by Rebuild when the run's streamed files are
// still growing: the process writing them is alive.
var ErrRunInProgress = errors.New("the run is still in progress")

// unknownClass is the error class of errors rebuilt from the streamed
// files, which record how many operations failed but not why.
const unknownClass = "unknown"

// Rebuild repairs the results directory of a run whose process died (a
// kill -9, a machine crash): run.json still has status "running". The
// summary per operation is rebuilt from intervals.hlog, merging each
// operation's interval histograms over the measured window (warm-up
// intervals excluded, using run.json's load.warmup_s) and ignoring a torn
// last line; late operations and concurrent sessions come from series.csv.
// The run is marked incomplete with exit code 4 and a note, and run.json is
// rewritten atomically. A run with any other status is returned as read.
//
// If intervals.hlog changed within the last few seconds, Rebuild waits to
// see whether it is still growing and returns ErrRunInProgress if it is.
// It reports whether it rebuilt anything.
func Rebuild(dir string) (*results.Run, bool, error) {
	r, err := results.Read(dir)
	if err != nil {
		return nil, false, err
	}
	if r.Status != results.StatusRunning {
		return r, false, nil
	}
	hlogPath := filepath.Join(dir, results.HlogFile)
	if err := waitQuiet(hlogPath, 3*time.Second); err != nil {
		return r, false, err
	}
	hl, err := metrics.ReadIntervalLog(hlogPath, r.Load.WarmupS)
	var notes []string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		hl = &metrics.IntervalLog{Hists: map[string]*hdr.Histogram{}}
		notes = append(notes, "no intervals.hlog: the process died before measuring began")
	case err != nil:
		return r, false, fmt.Errorf("rebuild %s: %w", dir, err)
	}
	ser, serr := readSeries(filepath.Join(dir, results.SeriesFile))
	if serr != nil {
		ser = &series{Rows: map[string][]seriesRow{}}
	}
	if hl.Torn || ser.Torn {
		notes = append(notes, "a torn last line (written as the process died) was ignored")
	}
	measured := hl.MeasuredS(r.Load.WarmupS)
	stats := rebuildStats(hl, ser, r.Load.Open)
	r.Summary = map[string]metrics.OpSummary{}
	for _, s := range metrics.Summarize(stats, time.Duration(measured*float64(time.Second)), nil) {
		if s.Errors > 0 {
			s.ErrorsByClass = map[string]int64{unknownClass: s.Errors}
		}
		r.Summary[s.Op] = s
	}
	r.Totals = results.Sum(r.Summary)
	r.MeasuredS = measured
	r.Intervals = hl.All
	if r.Load.Model == results.ModelPhases {
		for _, rows := range ser.Rows {
			for _, row := range rows {
				r.MaxSessions = max(r.MaxSessions, row.Sessions)
			}
		}
	}
	end := r.Start.Add(time.Duration(hl.EndS * float64(time.Second)))
	r.End = &end
	r.Status = results.StatusIncomplete
	r.ExitCode = results.ExitUnfinished
	r.StopReason = "the process died"
	msg := fmt.Sprintf("the scalelab process died before the run finished (run.json still said %q); the summary was rebuilt by `scalelab report` from intervals.hlog: %d intervals, %s measured",
		results.StatusRunning, hl.All, fmtDuration(measured))
	if len(notes) > 0 {
		msg += "; " + strings.Join(notes, "; ")
	}
	r.Error = msg
	r.Warnings = append(r.Warnings,
		"incomplete run: errors are counted by operation but their classes are not in the streamed files (class \"unknown\"); operations in flight when the process died are not counted; no process CPU figures or post-run checks")
	rebuildAudit(dir, r) // audit.go
	rebuildFaults(dir, r)
	files := map[string]bool{results.RunFile: true, results.ReportFile: true}
	for _, f := range r.Files {
		files[f] = true
	}
	for _, f := range []string{results.HlogFile, results.SeriesFile, results.SamplesFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			files[f] = true
		}
	}
	r.Files = r.Files[:0]
	for f := range files {
		r.Files = append(r.Files, f)
	}
	sort.Strings(r.Files)
	if err := results.WriteJSON(filepath.Join(dir, results.RunFile), r); err != nil {
		return r, false, err
	}
	return r, true, nil
}

// rebuildStats builds per-operation totals from the merged histograms.
// Operations are the log's tags without the ".service" and ".error"
// suffixes (and those in series.csv, for operations that only failed).
func rebuildStats(hl *metrics.IntervalLog, ser *series, open bool) []metrics.OpStats {
	var ops []string
	seen := map[string]bool{}
	add := func(op string) {
		if !seen[op] {
			seen[op] = true
			ops = append(ops, op)
		}
	}
	for _, op := range ser.Ops {
		add(op)
	}
	for _, tag := range hl.Tags {
		op := tag
		for _, suf := range []string{".service", ".error"} {
			if base, ok := strings.CutSuffix(tag, suf); ok {
				op = base
			}
		}
		add(op)
	}
	sort.Strings(ops)
	late := map[string]int64{}
	for op, rows := range ser.Rows {
		for _, row := range rows {
			if !row.Warmup {
				late[op] += row.Late
			}
		}
	}
	var out []metrics.OpStats
	for _, op := range ops {
		o := metrics.OpStats{Name: op, Lat: orEmpty(hl.Hists[op]), Err: orEmpty(hl.Hists[op+".error"]), Late: late[op]}
		if open || hl.Hists[op+".service"] != nil {
			o.Svc = orEmpty(hl.Hists[op+".service"])
		}
		o.Errs[metrics.Other] = o.Err.TotalCount()
		out = append(out, o)
	}
	return out
}

func orEmpty(h *hdr.Histogram) *hdr.Histogram {
	if h == nil {
		return metrics.NewHist()
	}
	return h
}

// waitQuiet returns nil once path has not changed for quiet (or does not
// exist), waiting at most a little longer than quiet, and
// ErrRunInProgress if it keeps changing.
func waitQuiet(path string, quiet time.Duration) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	age := time.Since(fi.ModTime())
	if age >= quiet {
		return nil
	}
	time.Sleep(quiet - age + 100*time.Millisecond)
	fi2, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		return fmt.Errorf("%w: %s is still being written; wait for the run to end or stop it first", ErrRunInProgress, path)
	}
	return nil
}
