package merge

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

// maxErrorSamples bounds the error samples kept per operation.
const maxErrorSamples = 10

// seriesKey places a series.csv row on the merged timeline, as
// metrics.MergeIntervalLogs places interval histograms.
func seriesKey(startS, offsetS, warmupS float64, warmup bool) float64 {
	if warmup {
		return math.Round(startS + offsetS)
	}
	return warmupS + math.Round(startS+offsetS-warmupS)
}

type seriesSums struct{ errors, late int64 }

// writeSeries rebuilds series.csv on the merged timeline: counts and
// percentiles from the merged histograms, errors and late starts summed
// from the segments' rows, and concurrent sessions summed over the
// segments. It returns the most concurrent sessions of any interval.
func writeSeries(use []*shard, ivs []metrics.MergedInterval, warmupS float64, path string) (int64, error) {
	type key struct {
		start  float64
		warmup bool
	}
	sums := map[key]map[string]*seriesSums{}
	sessions := map[key]int64{}
	var ops []string
	seen := map[string]bool{}
	for _, s := range use {
		sops, rows, err := report.ReadSeries(filepath.Join(s.dir, results.SeriesFile))
		if err != nil {
			return 0, fmt.Errorf("segment %d: %w", s.run.Segment.Index, err)
		}
		perShard := map[key]int64{}
		for _, op := range sops {
			if !seen[op] {
				seen[op] = true
				ops = append(ops, op)
			}
			for _, r := range rows[op] {
				k := key{seriesKey(r.T-r.IntervalS, s.offsetS, warmupS, r.Warmup), r.Warmup}
				m := sums[k]
				if m == nil {
					m = map[string]*seriesSums{}
					sums[k] = m
				}
				if m[op] == nil {
					m[op] = &seriesSums{}
				}
				m[op].errors += r.Errors
				m[op].late += r.Late
				perShard[k] = max(perShard[k], r.Sessions)
			}
		}
		for k, v := range perShard {
			sessions[k] += v
		}
	}
	for _, iv := range ivs {
		for tag := range iv.Tags {
			op := baseOp(tag)
			if !seen[op] {
				seen[op] = true
				ops = append(ops, op)
			}
		}
	}
	var b bytes.Buffer
	b.WriteString(metrics.SeriesHeader)
	var maxSessions int64
	for _, iv := range ivs {
		k := key{iv.StartS, iv.Warmup}
		sess := sessions[k]
		maxSessions = max(maxSessions, sess)
		for _, op := range ops {
			f := iv.Tags[op]
			var errs, late int64
			if s := sums[k][op]; s != nil {
				errs, late = s.errors, s.late
			}
			if f.Count == 0 && errs == 0 {
				continue
			}
			FormatRow(&b, iv, op, f, errs, late, sess)
		}
	}
	return maxSessions, results.WriteFileAtomic(path, b.Bytes())
}

// FormatRow appends the series.csv row of op in a merged interval.
func FormatRow(b *bytes.Buffer, iv metrics.MergedInterval, op string, f metrics.TagFigures, errs, late, sessions int64) {
	svc := iv.Tags[op+".service"]
	metrics.FormatSeriesRow(b, iv.StartS+iv.LenS, iv.LenS, op, f.Count, errs, f.P50, f.P99, f.Max, svc.P99, late, sessions, iv.Warmup, metrics.LagFigures{})
}

// baseOp is the operation of an interval log tag.
func baseOp(tag string) string {
	for _, suf := range []string{".service", ".error"} {
		if b, ok := strings.CutSuffix(tag, suf); ok {
			return b
		}
	}
	return tag
}

// newDoc starts the merged run.json from the first segment's: the test's
// configuration, with what belongs to one segment reset.
func newDoc(use []*shard, t0 time.Time, n int) *results.Run {
	ref := use[0].run
	d := *ref
	d.Status, d.ExitCode, d.Error, d.StopReason = "", 0, "", ref.StopReason
	d.Failures, d.Warnings = nil, nil
	d.Command = append([]string{"scalelab", "merge"}, dirsOf(use)...)
	d.Segment = nil
	d.Start = t0
	d.LoadStart = &t0 // the merged timeline starts at t0
	d.Summary = map[string]metrics.OpSummary{}
	d.Process, d.Audit, d.Faults, d.Events, d.Recovery, d.Lag, d.ScenarioReport = nil, nil, nil, nil, nil, nil, nil
	// each segment's telemetry saw its own host and tiers (a shared host or
	// cluster seen by every segment): combine leaves a note instead
	d.Telemetry = nil
	d.Files = []string{results.RunFile, results.HlogFile, results.SeriesFile}
	d.Merged = &results.Merged{Count: n}
	var end time.Time
	hosts := map[string]bool{}
	var hostList []string
	for _, s := range use {
		if s.run.End != nil && s.run.End.After(end) {
			end = *s.run.End
		}
		seg := s.run.Segment
		if !hosts[seg.Host] {
			hosts[seg.Host] = true
			hostList = append(hostList, seg.Host)
		}
		d.Merged.Shards = append(d.Merged.Shards, results.MergedShard{Index: seg.Index, Dir: s.dir, Host: seg.Host, Status: s.run.Status,
			ExitCode: s.run.ExitCode, StartLateMs: seg.StartLateMs, OffsetS: s.offsetS, Clock: seg.Clock})
	}
	if !end.IsZero() {
		d.End = &end
	}
	d.Host.Hostname = strings.Join(hostList, ", ")
	return &d
}

func dirsOf(use []*shard) []string {
	out := make([]string, len(use))
	for i, s := range use {
		out[i] = s.dir
	}
	return out
}

// summarize fills the summary per operation from the merged interval log
// (every percentile from the merged histograms of the measured window)
// and the exact counts the segments' run.json hold: errors by class, in
// flight, late starts, error samples.
func summarize(doc *results.Run, use []*shard, hlogPath string) error {
	hl, err := metrics.ReadIntervalLog(hlogPath, doc.Load.WarmupS)
	if err != nil {
		return err
	}
	measured := hl.MeasuredS(doc.Load.WarmupS)
	var ops []string
	seen := map[string]bool{}
	for _, s := range use {
		for op := range s.run.Summary {
			if !seen[op] {
				seen[op] = true
				ops = append(ops, op)
			}
		}
	}
	for _, tag := range hl.Tags {
		if op := baseOp(tag); !seen[op] {
			seen[op] = true
			ops = append(ops, op)
		}
	}
	sort.Strings(ops)
	stats := make([]metrics.OpStats, 0, len(ops))
	for _, op := range ops {
		o := metrics.OpStats{Name: op, Lat: orEmpty(hl.Hists[op]), Err: orEmpty(hl.Hists[op+".error"])}
		if doc.Load.Open || hl.Hists[op+".service"] != nil {
			o.Svc = orEmpty(hl.Hists[op+".service"])
		}
		o.Errs[metrics.Other] = o.Err.TotalCount()
		stats = append(stats, o)
	}
	for _, s := range metrics.Summarize(stats, time.Duration(measured*float64(time.Second)), nil) {
		s.Errors, s.InFlight, s.Late = 0, 0, 0
		s.ErrorsByClass = map[string]int64{}
		s.ErrorSamples = nil
		for _, sh := range use {
			o, ok := sh.run.Summary[s.Op]
			if !ok {
				continue
			}
			s.Errors += o.Errors
			s.InFlight += o.InFlight
			s.Composite = o.Composite
			s.Late += o.Late
			for c, n := range o.ErrorsByClass {
				s.ErrorsByClass[c] += n
			}
			for _, e := range o.ErrorSamples {
				if len(s.ErrorSamples) < maxErrorSamples && !slices.Contains(s.ErrorSamples, e) {
					s.ErrorSamples = append(s.ErrorSamples, e)
				}
			}
		}
		s.Started = s.Count + s.Errors + s.InFlight
		doc.Summary[s.Op] = s
	}
	doc.Totals = results.Sum(doc.Summary)
	doc.MeasuredS = measured
	doc.Intervals = hl.All
	return nil
}

func orEmpty(h *hdr.Histogram) *hdr.Histogram {
	if h == nil {
		return metrics.NewHist()
	}
	return h
}

// combine adds what each segment recorded beside the latencies: the
// acknowledged-write audit, scalelab's own CPU, schedule lag counts, the
// client queue, faults, events and warnings, and each segment's scenario
// figures.
func combine(doc *results.Run, use []*shard) {
	var scen []map[string]any
	tele := false
	for _, s := range use {
		r := s.run
		idx := r.Segment.Index
		tele = tele || r.Telemetry != nil
		if r.Audit != nil {
			doc.Audit = addAudit(doc.Audit, r.Audit)
			if !r.Audit.Checked {
				doc.Audit.Checked = false
			}
		}
		if r.Process != nil {
			if doc.Process == nil {
				doc.Process = &results.Process{}
			}
			p := doc.Process
			p.CPUUserS += r.Process.CPUUserS
			p.CPUSysS += r.Process.CPUSysS
			p.MaxRSSBytes = max(p.MaxRSSBytes, r.Process.MaxRSSBytes)
			p.WallS = max(p.WallS, r.Process.WallS)
		}
		if r.Lag != nil {
			if doc.Lag == nil {
				doc.Lag = &metrics.LagSummary{}
			}
			doc.Lag.Count += r.Lag.Count
			if r.Lag.MaxMs != nil && (doc.Lag.MaxMs == nil || *r.Lag.MaxMs > *doc.Lag.MaxMs) {
				v := *r.Lag.MaxMs
				doc.Lag.MaxMs = &v
			}
		}
		if q := r.ClientQueue; q != nil {
			if doc.ClientQueue == nil {
				doc.ClientQueue = &results.ClientQueue{MaxIsBound: len(use) > 1}
			}
			doc.ClientQueue.Slots += q.Slots
			doc.ClientQueue.MaxWaiting += q.MaxWaiting
			doc.ClientQueue.InProcess = doc.ClientQueue.InProcess || q.InProcess
		}
		doc.Faults = append(doc.Faults, r.Faults...)
		for _, e := range r.Events {
			e.Detail = fmt.Sprintf("segment %d: %s", idx, e.Detail)
			doc.Events = append(doc.Events, e)
		}
		if r.Recovery != nil && doc.Recovery == nil {
			doc.Recovery = r.Recovery
		}
		for _, w := range r.Warnings {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("segment %d: %s", idx, w))
		}
		if r.ScenarioReport != nil {
			scen = append(scen, map[string]any{"segment": idx, "report": r.ScenarioReport})
		}
	}
	if doc.Process != nil && doc.Totals != nil && doc.Totals.Started > 0 {
		doc.Process.CPUPerOpUs = (doc.Process.CPUUserS + doc.Process.CPUSysS) / float64(doc.Totals.Started) * 1e6
	}
	if doc.Audit != nil {
		sort.Slice(doc.Audit.LostIDs, func(i, j int) bool { return doc.Audit.LostIDs[i] < doc.Audit.LostIDs[j] })
		if len(doc.Audit.LostIDs) > maxLostIDs {
			doc.Audit.LostIDs = doc.Audit.LostIDs[:maxLostIDs]
		}
		if doc.Audit.Lost > 0 {
			doc.Failures = append(doc.Failures, fmt.Sprintf("audit: %d acknowledged writes lost across the segments (first ids %v)", doc.Audit.Lost, doc.Audit.LostIDs))
		}
		if g := doc.Audit.Registers; g != nil {
			mergedRegisters(doc, g, len(use))
		}
	}
	if tele {
		doc.Warnings = append(doc.Warnings, "telemetry: not merged: each segment's host, tiers and saturation verdict are its own (in each segment's run.json and telemetry.csv); scalelab's own CPU, summed over the segments, is under process")
	}
	if len(scen) > 0 {
		doc.ScenarioReport = map[string]any{"segments": scen}
	}
	if doc.Lag != nil && doc.Lag.Count > 0 {
		doc.Warnings = append(doc.Warnings, "schedule lag: counts and the maximum are merged; its percentiles are per segment (in each segment's run.json)")
	}
}

// mergedRegisters words the register audit of the whole: a register one
// segment found last written by another (Foreign) is judged by the segment
// whose write it holds, so the whole does not count it apart; its keys are
// the most any segment wrote. A lost or resurrected register fails it.
func mergedRegisters(doc *results.Run, g *results.RegisterAudit, segments int) {
	g.Foreign = 0
	g.KeysAtLeast = segments > 1
	if g.Lost+g.Resurrected > 0 {
		doc.Failures = append(doc.Failures, fmt.Sprintf("audit: %d lost updates and %d resurrected keys across the segments", g.Lost, g.Resurrected))
	}
}

// maxLostIDs bounds the lost ids listed.
const maxLostIDs = 20

// addAudit adds b's figures to a (nil: a copy of b).
func addAudit(a, b *results.Audit) *results.Audit {
	if a == nil {
		c := *b
		c.LostIDs = slices.Clone(b.LostIDs)
		c.UnknownByClass = map[string]int64{}
		for k, v := range b.UnknownByClass {
			c.UnknownByClass[k] = v
		}
		if b.Registers != nil {
			r := *b.Registers
			r.Examples = slices.Clone(b.Registers.Examples)
			c.Registers = &r
		}
		return &c
	}
	a.Attempted += b.Attempted
	a.Acknowledged += b.Acknowledged
	a.Failed += b.Failed
	a.Unknown += b.Unknown
	for k, v := range b.UnknownByClass {
		if a.UnknownByClass == nil {
			a.UnknownByClass = map[string]int64{}
		}
		a.UnknownByClass[k] += v
	}
	a.Checked = a.Checked && b.Checked
	if a.NotChecked == "" {
		a.NotChecked = b.NotChecked
	}
	a.ReadBack += b.ReadBack
	a.Lost += b.Lost
	a.LostIDs = append(a.LostIDs, b.LostIDs...)
	a.UnknownPresent += b.UnknownPresent
	a.UnknownAbsent += b.UnknownAbsent
	a.FailedPresent += b.FailedPresent
	a.Overwritten += b.Overwritten
	a.Seconds = math.Max(a.Seconds, b.Seconds)
	a.TornLine = a.TornLine || b.TornLine
	if a.Error == "" {
		a.Error = b.Error
	}
	if g := b.Registers; g != nil {
		if a.Registers == nil {
			a.Registers = &results.RegisterAudit{Checked: true}
		}
		r := a.Registers
		// the segments write the same keys, and run.json does not say which:
		// the most of any segment, a lower bound of the whole's (KeysAtLeast)
		r.Keys = max(r.Keys, g.Keys)
		r.Registers = max(r.Registers, g.Registers)
		r.Writes += g.Writes
		r.Acknowledged += g.Acknowledged
		r.Failed += g.Failed
		r.Unknown += g.Unknown
		r.Ambiguous += g.Ambiguous
		r.Checked = r.Checked && g.Checked
		r.ReadBack += g.ReadBack
		r.Lost += g.Lost
		r.Resurrected += g.Resurrected
		r.Foreign += g.Foreign
		r.Overwritten += g.Overwritten
		r.Unlogged += g.Unlogged
		if len(r.Examples) < maxLostIDs {
			r.Examples = append(r.Examples, g.Examples...)
		}
		r.Seconds = math.Max(r.Seconds, g.Seconds)
		if r.Error == "" {
			r.Error = g.Error
		}
	}
	return a
}
