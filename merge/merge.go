// Package merge adds the results directories of a divided test's segments
// (`scalelab run --segment I/N`) into one results directory: interval
// histograms added per operation per interval on the shared timeline, so
// that every percentile is exact; counts, errors and audits summed; SLOs
// evaluated on the whole; and the report of the whole.
package merge

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/slo"
)

// Options control a merge.
type Options struct {
	// AllowIncomplete merges the segments present even when some are
	// missing or did not finish; the result is marked incomplete (exit
	// code 4) and names them.
	AllowIncomplete bool
}

// shard is one segment's results directory.
type shard struct {
	dir  string
	run  *results.Run
	hlog []byte
	// offsetS is where the segment's t = 0 falls on the merged timeline.
	offsetS float64
}

// complete reports whether the segment's run finished: ok, or failed only
// because a check failed (its figures are whole).
func complete(r *results.Run) bool {
	return r.Status == results.StatusOK || (r.Status == results.StatusFailed && r.ExitCode == results.ExitCheckFailed)
}

// Merge reads the segments' directories, checks that they are the
// segments of one test, and writes the merged results directory out
// (which must not exist or be empty). It returns the merged document; the
// error carries the exit code as a run's does (1: a check or SLO failed,
// 2: the inputs are not the segments of one test, or some are missing
// without AllowIncomplete, 4: an incomplete merge).
func Merge(dirs []string, out string, o Options) (*results.Run, error) {
	began := time.Now()
	if len(dirs) == 0 {
		return nil, results.UsageErr("merge: no segment directories given")
	}
	shards, err := readShards(dirs)
	if err != nil {
		return nil, err
	}
	ref := shards[0].run
	n := ref.Segment.Count
	byIndex := map[int]*shard{}
	var failed []int
	var failedWhy []string
	for _, s := range shards {
		seg := s.run.Segment
		if seg.TestHash != ref.Segment.TestHash || seg.Count != n {
			return nil, results.UsageErr("merge: %s and %s are not segments of the same test: test hash %s of %d segments vs %s of %d (a different scenario, engine, setting, load, seed or start time)",
				shards[0].dir, s.dir, ref.Segment.TestHash, n, seg.TestHash, seg.Count)
		}
		if prev, ok := byIndex[seg.Index]; ok {
			return nil, results.UsageErr("merge: %s and %s are both segment %d/%d", prev.dir, s.dir, seg.Index, n)
		}
		byIndex[seg.Index] = s
		if !complete(s.run) {
			failed = append(failed, seg.Index)
			why := fmt.Sprintf("segment %d (%s) did not finish: status %s, exit code %d", seg.Index, s.dir, s.run.Status, s.run.ExitCode)
			if s.run.Status == results.StatusRunning {
				why = fmt.Sprintf("segment %d (%s) did not finish: its process died (run.json still says running)", seg.Index, s.dir)
			}
			failedWhy = append(failedWhy, why)
		}
	}
	var missing []int
	for i := range n {
		if byIndex[i] == nil {
			missing = append(missing, i)
		}
	}
	if (len(missing) > 0 || len(failed) > 0) && !o.AllowIncomplete {
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, fmt.Sprintf("segment%s %s of %d %s missing (no directory given)", plural(len(missing)), joinInts(missing), n, isAre(len(missing))))
		}
		parts = append(parts, failedWhy...)
		return nil, results.UsageErr("merge: %s; give every segment's directory, or --allow-incomplete to merge the rest into a result marked incomplete", strings.Join(parts, "; "))
	}
	var use []*shard
	for i := range n {
		if s := byIndex[i]; s != nil && complete(s.run) {
			use = append(use, s)
		}
	}
	if len(use) == 0 {
		return nil, results.WithCode(results.ExitUnfinished, errors.New("merge: no segment finished; nothing to merge"))
	}
	if err := results.Create(out); err != nil {
		return nil, results.WithCode(results.ExitUsage, fmt.Errorf("merge: %w", err))
	}
	doc, err := build(use, out, n, missing, failed, failedWhy)
	if err != nil {
		return nil, results.WithCode(results.ExitUnfinished, fmt.Errorf("merge: %w", err))
	}
	doc.Merged.Seconds = time.Since(began).Seconds()
	if err := results.WriteJSON(filepath.Join(out, results.RunFile), doc); err != nil {
		return doc, results.WithCode(results.ExitUnfinished, fmt.Errorf("merge: %w", err))
	}
	if err := report.WriteHTML(filepath.Join(out, results.ReportFile), doc, out); err != nil {
		doc.Warnings = append(doc.Warnings, "report.html: "+err.Error())
	} else {
		doc.Files = append(doc.Files, results.ReportFile)
		sort.Strings(doc.Files)
	}
	if err := results.WriteJSON(filepath.Join(out, results.RunFile), doc); err != nil {
		return doc, results.WithCode(results.ExitUnfinished, fmt.Errorf("merge: %w", err))
	}
	if doc.ExitCode != results.ExitOK {
		return doc, &results.ExitError{Code: doc.ExitCode, Err: results.ErrReported}
	}
	return doc, nil
}

// readShards reads every directory's run.json and interval log.
func readShards(dirs []string) ([]*shard, error) {
	var out []*shard
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() {
			return nil, results.UsageErr("merge: %s is not a directory", d)
		}
		r, err := results.Read(d)
		if err != nil {
			return nil, results.UsageErr("merge: %v", err)
		}
		if r.Segment == nil || r.Segment.Count < 1 {
			return nil, results.UsageErr("merge: %s is not a segment of a divided test (its run.json has no segment; run with --segment I/N)", d)
		}
		s := &shard{dir: d, run: r}
		if complete(r) {
			if s.hlog, err = os.ReadFile(filepath.Join(d, results.HlogFile)); err != nil {
				return nil, results.UsageErr("merge: segment %d: %v", r.Segment.Index, err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// build writes the merged interval log and series.csv and makes run.json.
func build(use []*shard, out string, n int, missing, failed []int, failedWhy []string) (*results.Run, error) {
	ref := use[0].run
	t0, err := timeline(use)
	if err != nil {
		return nil, err
	}
	warmup := ref.Load.WarmupS
	hl := make([]metrics.HlogShard, len(use))
	for i, s := range use {
		hl[i] = metrics.HlogShard{Data: s.hlog, OffsetS: s.offsetS}
	}
	var buf strings.Builder
	ivs, _, err := metrics.MergeIntervalLogs(hl, warmup, t0.UnixMilli(), &buf)
	if err != nil {
		return nil, err
	}
	if err := results.WriteFileAtomic(filepath.Join(out, results.HlogFile), []byte(buf.String())); err != nil {
		return nil, err
	}
	maxSessions, err := writeSeries(use, ivs, warmup, filepath.Join(out, results.SeriesFile))
	if err != nil {
		return nil, err
	}
	doc := newDoc(use, t0, n)
	if doc.Load.Model == results.ModelPhases || doc.Load.Model == results.ModelThreads {
		doc.MaxSessions = maxSessions
	}
	if doc.Concurrency, err = writeConcurrency(use, warmup, filepath.Join(out, results.ConcurrencyFile)); err != nil {
		return nil, err
	}
	if doc.Concurrency != nil {
		doc.Files = append(doc.Files, results.ConcurrencyFile)
	}
	if err := summarize(doc, use, filepath.Join(out, results.HlogFile)); err != nil {
		return nil, err
	}
	combine(doc, use)
	doc.Merged.Missing, doc.Merged.Failed = missing, failed
	for _, s := range use {
		for _, f := range s.run.Failures {
			if !strings.HasPrefix(f, "SLO ") { // the SLOs are judged on the whole below
				doc.Failures = append(doc.Failures, fmt.Sprintf("segment %d: %s", s.run.Segment.Index, f))
			}
		}
	}
	if len(ref.SLO) > 0 {
		fails, err := slo.Failures(ref.SLO, doc)
		if err != nil {
			return nil, err
		}
		doc.Failures = append(doc.Failures, fails...)
	}
	switch {
	case len(missing) > 0 || len(failed) > 0:
		doc.Status, doc.ExitCode = results.StatusIncomplete, results.ExitUnfinished
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, fmt.Sprintf("segment%s %s of %d %s missing", plural(len(missing)), joinInts(missing), n, isAre(len(missing))))
		}
		parts = append(parts, failedWhy...)
		doc.Error = "incomplete merge: " + strings.Join(parts, "; ") + "; the figures are those of the segments merged"
	case len(doc.Failures) > 0:
		doc.Status, doc.ExitCode = results.StatusFailed, results.ExitCheckFailed
	default:
		doc.Status, doc.ExitCode = results.StatusOK, results.ExitOK
	}
	return doc, nil
}

// timeline fixes t = 0 of the merged result (the shared --start-at, else
// the earliest segment's start) and each segment's offset from it.
func timeline(use []*shard) (time.Time, error) {
	starts := make([]time.Time, len(use))
	var t0 time.Time
	for i, s := range use {
		// run.json has the start to the microsecond; the log's header
		// only to the second
		st, err := metrics.HlogStart(s.hlog)
		if ls := s.run.Segment.LoadStart; ls != nil {
			st, err = *ls, nil
		}
		if err != nil {
			return t0, fmt.Errorf("segment %d (%s): %w", s.run.Segment.Index, s.dir, err)
		}
		starts[i] = st
		if t0.IsZero() || st.Before(t0) {
			t0 = st
		}
	}
	if at := use[0].run.Segment.StartAt; at != nil {
		t0 = *at
	}
	for i, s := range use {
		s.offsetS = starts[i].Sub(t0).Seconds()
	}
	return t0, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func joinInts(xs []int) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
