package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// HlogShard is one interval log to merge: its bytes, where its t = 0
// falls on the merged timeline (seconds, OffsetS), and the warm-up its
// run excluded.
type HlogShard struct {
	Data    []byte
	OffsetS float64
}

// TagFigures are the figures of one tag in one merged interval, in
// nanoseconds: what series.csv needs, without keeping the histogram.
type TagFigures struct {
	Count         int64
	P50, P99, Max *float64 // milliseconds; nil where the count cannot support them
}

// MergedInterval is one interval of the merged timeline: its start (seconds
// since the merged t = 0), length, whether it is in the warm-up, and the
// figures of each tag's merged histogram.
type MergedInterval struct {
	StartS, LenS float64
	Warmup       bool
	Tags         map[string]TagFigures
}

// mergeKey places an interval on the merged timeline: measured intervals
// on a grid anchored at the end of the warm-up (a run closes an interval
// there), warm-up ones on a grid anchored at 0.
type mergeKey struct {
	warmup bool
	k      int64
}

type mergeLine struct {
	tag     int
	lenS    float64
	payload []byte
	lineNo  int
	shard   int
}

// MergeIntervalLogs adds the shards' interval histograms, tag by tag, that
// fall in the same interval of the merged timeline (a shard's interval
// start plus its offset, rounded to the interval grid), and writes the
// merged log to w in the format runs write (HdrHistogram interval log,
// values in nanoseconds, timestamps relative to startMs). Every histogram
// must have scalelab's geometry (NewHist): counts add exactly. It returns
// the merged intervals in time order with their figures, and the tags in
// order of first appearance.
func MergeIntervalLogs(shards []HlogShard, warmupS float64, startMs int64, w io.Writer) ([]MergedInterval, []string, error) {
	g := &mergeGroups{groups: map[mergeKey][]mergeLine{}}
	for si, sh := range shards {
		if err := g.addShard(si, sh, warmupS); err != nil {
			return nil, nil, err
		}
	}
	keys := g.sortedKeys(warmupS)
	out, blocks, err := g.mergeAll(keys, warmupS, startMs)
	if err != nil {
		return nil, nil, err
	}
	if err := writeMergedLog(w, startMs, blocks); err != nil {
		return nil, nil, err
	}
	return out, g.tags.names, nil
}

// mergeGroups are the shards' histogram lines grouped by their interval
// on the merged timeline, and the tags in order of first appearance.
type mergeGroups struct {
	tags   tagTable
	groups map[mergeKey][]mergeLine
}

// addShard adds the histogram lines of shard si to their groups; a torn
// last line is ignored.
func (g *mergeGroups) addShard(si int, sh HlogShard, warmupS float64) error {
	data, _ := wholeLines(sh.Data)
	err := eachHlogLine(data, func(l hlogLine) {
		measured := l.after(warmupS)
		key := mergeKey{warmup: !measured}
		if measured {
			key.k = int64(math.Round(l.startS + sh.OffsetS - warmupS))
		} else {
			key.k = int64(math.Round(l.startS + sh.OffsetS))
		}
		g.groups[key] = append(g.groups[key], mergeLine{tag: g.tags.id(l.tag), lenS: l.lenS, payload: l.payload, lineNo: l.lineNo, shard: si})
	})
	if err != nil {
		return fmt.Errorf("shard %d: %w", si, err)
	}
	return nil
}

// startS is the start of the merged interval k, in seconds since the
// merged t = 0.
func (k mergeKey) startS(warmupS float64) float64 {
	if k.warmup {
		return float64(k.k)
	}
	return warmupS + float64(k.k)
}

// sortedKeys returns the groups' intervals in time order, a warm-up one
// before a measured one that starts at the same time.
func (g *mergeGroups) sortedKeys(warmupS float64) []mergeKey {
	keys := make([]mergeKey, 0, len(g.groups))
	for k := range g.groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		si, sj := keys[i].startS(warmupS), keys[j].startS(warmupS)
		if si != sj {
			return si < sj
		}
		return keys[i].warmup && !keys[j].warmup
	})
	return keys
}

// mergeAll merges the groups of keys on all processors and returns, in the
// order of keys, each interval's figures and its lines of the merged log.
func (g *mergeGroups) mergeAll(keys []mergeKey, warmupS float64, startMs int64) ([]MergedInterval, [][]byte, error) {
	out := make([]MergedInterval, len(keys))
	blocks := make([][]byte, len(keys))
	errs := make([]error, len(keys))
	var next sync.Mutex
	pos := 0
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(keys), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := &intervalMerger{d: &decoder{}, accs: make([]tagAcc, len(g.tags.names))}
			for {
				next.Lock()
				i := pos
				pos++
				next.Unlock()
				if i >= len(keys) {
					return
				}
				out[i], blocks[i], errs[i] = m.merge(g.groups[keys[i]], g.tags.names, keys[i].startS(warmupS), keys[i].warmup, startMs)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return out, blocks, nil
}

// writeMergedLog writes the merged log's header and then its blocks to w.
func writeMergedLog(w io.Writer, startMs int64, blocks [][]byte) error {
	if err := writeHlogHeader(w, startMs); err != nil {
		return err
	}
	for _, b := range blocks {
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("write merged interval log: %w", err)
		}
	}
	return nil
}

// intervalMerger merges one interval's lines, reusing its counts arrays.
type intervalMerger struct {
	d    *decoder
	accs []tagAcc
	buf  bytes.Buffer
}

// merge adds lines, one interval's, per tag and returns the interval's
// figures and its lines of the merged log.
func (m *intervalMerger) merge(lines []mergeLine, tags []string, startS float64, warmup bool, startMs int64) (MergedInterval, []byte, error) {
	iv := MergedInterval{StartS: startS, Warmup: warmup, Tags: map[string]TagFigures{}}
	used := make([]bool, len(tags))
	for i := range m.accs {
		a := &m.accs[i]
		clear(a.counts)
		a.other = nil
	}
	for _, l := range lines {
		iv.LenS = math.Max(iv.LenS, l.lenS)
		if err := m.d.add(&m.accs[l.tag], l.payload); err != nil {
			return iv, nil, fmt.Errorf("shard %d: interval log line %d (%s): %w", l.shard, l.lineNo, tags[l.tag], err)
		}
		used[l.tag] = true
	}
	m.buf.Reset()
	lw := hdr.NewHistogramLogWriter(&m.buf)
	lw.SetBaseTime(startMs)
	for i, tag := range tags {
		if !used[i] {
			continue
		}
		h := m.accs[i].histogram()
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		iv.Tags[tag] = TagFigures{Count: h.TotalCount(), P50: PercentileMs(h, 50), P99: PercentileMs(h, 99), Max: ptr(nsToMs(h.Max()))}
		h.SetTag(tag)
		h.SetStartTimeMs(startMs + int64(math.Round(startS*1000)))
		h.SetEndTimeMs(startMs + int64(math.Round((startS+iv.LenS)*1000)))
		if err := lw.OutputIntervalHistogram(h); err != nil {
			return iv, nil, fmt.Errorf("encode merged %s: %w", tag, err)
		}
	}
	return iv, bytes.Clone(m.buf.Bytes()), nil
}

// writeHlogHeader writes the header NewHlogSink writes.
func writeHlogHeader(w io.Writer, startMs int64) error {
	lw := hdr.NewHistogramLogWriter(w)
	lw.SetBaseTime(startMs)
	for _, err := range []error{
		lw.OutputComment("scalelab interval log: values in nanoseconds, one histogram per operation per 1 s interval, tagged by operation; merged from the segments of a divided test"),
		lw.OutputLogFormatVersion(), lw.OutputStartTime(startMs), lw.OutputBaseTime(startMs), lw.OutputLegend(),
	} {
		if err != nil {
			return fmt.Errorf("write merged interval log: %w", err)
		}
	}
	return nil
}

// HlogStart reads the start time of an interval log from its StartTime
// header (which the HdrHistogram writer keeps to the whole second).
func HlogStart(data []byte) (time.Time, error) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		line := data[:i]
		if v, ok := headerValue(line, "#[StartTime: "); ok {
			return time.UnixMilli(int64(math.Round(v * 1000))), nil
		}
		if len(line) > 0 && line[0] != '#' && line[0] != '"' {
			break
		}
		data = data[min(i+1, len(data)):]
	}
	return time.Time{}, errors.New("interval log has no StartTime header")
}

// LagFigures are an interval's schedule lag percentiles in milliseconds
// (nil: none recorded, or too few operations for the percentile).
type LagFigures struct{ P50, P99, Max *float64 }

// LagFiguresOf returns the figures of a lag histogram (nil: none).
func LagFiguresOf(h *hdr.Histogram) LagFigures {
	if h == nil || h.TotalCount() == 0 {
		return LagFigures{}
	}
	return LagFigures{P50: PercentileMs(h, 50), P99: PercentileMs(h, 99), Max: ptr(nsToMs(h.Max()))}
}

// FormatSeriesRow appends one series.csv row (the columns of SeriesHeader).
func FormatSeriesRow(b *bytes.Buffer, endS, lenS float64, op string, count, errs int64, p50, p99, maxMs, svcP99 *float64, late, sessions int64, warmup bool, lag LagFigures) {
	tput := 0.0
	if lenS > 0 {
		tput = float64(count) / lenS
	}
	b.WriteString(strconv.FormatFloat(endS, 'f', 3, 64))
	fmt.Fprintf(b, ",%.3f,%s,%d,%d,%.1f,%s,%s,%s,%s,%d,%d,%t,%s,%s,%s\n", lenS, op, count, errs, tput,
		fmtMs(p50), fmtMs(p99), fmtMs(maxMs), fmtMs(svcP99), late, sessions, warmup, fmtMs(lag.P50), fmtMs(lag.P99), fmtMs(lag.Max))
}
