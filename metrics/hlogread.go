package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// IntervalLog is what a report needs from intervals.hlog: per tag (an
// operation, "<op>.service" or "<op>.error"), the histogram merged over
// the measured window, and the extent of that window.
type IntervalLog struct {
	Tags      []string                  // in order of first appearance
	Hists     map[string]*hdr.Histogram // merged over the measured window
	Intervals int                       // distinct interval start times in the measured window
	All       int                       // distinct interval start times, warm-up included
	FirstS    float64                   // start of the first measured interval, seconds since the run start
	EndS      float64                   // end of the last interval, seconds since the run start
	Lines     int                       // histogram lines read (warm-up included)
	Torn      bool                      // a torn last line (a crash mid-write) was ignored
}

// MeasuredS returns the length of the measured window the log covers:
// from the end of the warm-up to the end of the last interval.
func (l *IntervalLog) MeasuredS(warmupS float64) float64 {
	if l.Intervals == 0 {
		return 0
	}
	return math.Max(0, l.EndS-math.Max(warmupS, 0))
}

// hlog encodings (the HdrHistogram V2 format): the outer cookie of a
// compressed histogram and the inner cookie of its payload; the low 4 bits
// of the second nibble carry the word size and are masked off.
const (
	compressedCookie = 0x1c849304
	payloadCookie    = 0x1c849303
	cookieMask       = ^int32(0xf0)
	payloadHeader    = 40
)

// ReadIntervalLog reads an HdrHistogram interval log as scalelab writes it
// (timestamps relative to the log's BaseTime) and merges, per tag, the
// histograms of the intervals starting at or after warmupS. A torn last
// line (no newline: the process died mid-write) is ignored and flagged.
//
// Decoding is done here rather than with hdr.Decode and Histogram.Merge:
// those allocate a dense counts array per line and walk it, which for a
// one-hour run of several operations takes many seconds. Each payload is
// added index by index into one counts array per tag (every line shares
// the geometry of NewHist), using all processors. A line with
// another geometry (a log from another tool) goes through hdr.Decode and
// Merge instead.
func ReadIntervalLog(path string, warmupS float64) (*IntervalLog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read interval log: %w", err)
	}
	return ParseIntervalLog(data, warmupS)
}

// hlogLine is one histogram line, located in the log's bytes.
type hlogLine struct {
	tag          string
	startS, lenS float64
	payload      []byte
	lineNo       int
	measured     bool
	tagIdx       int
}

// linesPerWorker is the least number of lines worth a decoding goroutine.
const linesPerWorker = 256

// ParseIntervalLog parses an interval log's bytes (ReadIntervalLog reads
// the file); intervals that start before warmupS are left out.
func ParseIntervalLog(data []byte, warmupS float64) (*IntervalLog, error) {
	return ParseIntervalLogWorkers(data, warmupS, 0)
}

// ParseIntervalLogWorkers parses with the given number of decoding
// goroutines (0: one per processor, as the log's size warrants).
func ParseIntervalLogWorkers(data []byte, warmupS float64, workers int) (*IntervalLog, error) {
	out := &IntervalLog{Hists: map[string]*hdr.Histogram{}}
	data, out.Torn = wholeLines(data)
	lines, err := scanHlogLines(out, data, warmupS)
	if err != nil {
		return nil, err
	}
	if workers <= 0 {
		workers = min(runtime.GOMAXPROCS(0), max(1, len(lines)/linesPerWorker))
	}
	workers = max(1, min(workers, len(lines)))
	accs, err := decodeMeasured(lines, len(out.Tags), workers)
	if err != nil {
		return nil, err
	}
	mergeWorkerAccs(out, accs)
	return out, nil
}

// scanHlogLines locates the histogram lines of data (whole lines) and
// sets the tags and the extent of the log in out.
func scanHlogLines(out *IntervalLog, data []byte, warmupS float64) ([]hlogLine, error) {
	var lines []hlogLine
	var tags tagTable
	starts, all := map[float64]struct{}{}, map[float64]struct{}{}
	out.FirstS = math.Inf(1)
	err := eachHlogLine(data, func(l hlogLine) {
		l.measured = l.after(warmupS)
		l.tagIdx = tags.id(l.tag)
		out.Lines++
		out.EndS = math.Max(out.EndS, l.startS+l.lenS)
		all[l.startS] = struct{}{}
		if l.measured {
			starts[l.startS] = struct{}{}
			out.FirstS = math.Min(out.FirstS, l.startS)
		}
		lines = append(lines, l)
	})
	if err != nil {
		return nil, err
	}
	out.Tags = tags.names
	out.Intervals, out.All = len(starts), len(all)
	if out.Intervals == 0 {
		out.FirstS = 0
	}
	return lines, nil
}

// wholeLines cuts a torn last line (one without its newline) off an
// interval log's bytes and reports whether there was one.
func wholeLines(data []byte) ([]byte, bool) {
	if n := len(data); n > 0 && data[n-1] != '\n' {
		return data[:bytes.LastIndexByte(data, '\n')+1], true
	}
	return data, false
}

// eachHlogLine calls fn with each histogram line of data (whole lines) in
// order, numbered from 1 among all lines, its start made relative to the
// log's StartTime where it is absolute; blank lines, headers and the
// legend are passed over.
func eachHlogLine(data []byte, fn func(l hlogLine)) error {
	var startTimeS float64
	lineNo := 0
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		line := bytes.TrimRight(data[:i], "\r")
		data = data[i+1:]
		lineNo++
		if len(line) == 0 || line[0] == '"' { // the legend
			continue
		}
		if line[0] == '#' {
			if v, ok := headerValue(line, "#[StartTime: "); ok {
				startTimeS = v
			}
			continue
		}
		l, err := splitHlogLine(line)
		if err != nil {
			return fmt.Errorf("interval log line %d: %w", lineNo, err)
		}
		l.lineNo = lineNo
		if l.startS > 1e8 && startTimeS > 0 { // absolute timestamps
			l.startS -= startTimeS
		}
		fn(l)
	}
	return nil
}

// after reports whether the line's interval starts at or after warmupS,
// the end of the warm-up; half a millisecond early still counts, for start
// times the log rounds.
func (l *hlogLine) after(warmupS float64) bool { return l.startS >= warmupS-0.0005 }

// tagTable numbers interval logs' tags in the order they first appear.
type tagTable struct {
	index map[string]int
	names []string
}

// id returns tag's number, giving it the next one when it is new.
func (t *tagTable) id(tag string) int {
	if i, ok := t.index[tag]; ok {
		return i
	}
	if t.index == nil {
		t.index = map[string]int{}
	}
	t.index[tag] = len(t.names)
	t.names = append(t.names, tag)
	return len(t.names) - 1
}

// decodeMeasured adds the measured lines' histograms into one accumulator
// per tag and worker, each of workers goroutines taking an equal run of
// lines; accs[w][tag] is nil where worker w saw no line of the tag.
func decodeMeasured(lines []hlogLine, tags, workers int) ([][]*tagAcc, error) {
	accs := make([][]*tagAcc, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	chunk := (len(lines) + workers - 1) / max(workers, 1)
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(lines))
		accs[w] = make([]*tagAcc, tags)
		wg.Add(1)
		go func(w int, part []hlogLine) {
			defer wg.Done()
			d := &decoder{}
			for i := range part {
				l := &part[i]
				if !l.measured {
					continue
				}
				a := accs[w][l.tagIdx]
				if a == nil {
					a = &tagAcc{}
					accs[w][l.tagIdx] = a
				}
				if err := d.add(a, l.payload); err != nil {
					errs[w] = fmt.Errorf("interval log line %d (%s): %w", l.lineNo, l.tag, err)
					return
				}
			}
		}(w, lines[lo:hi])
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return accs, nil
}

// mergeWorkerAccs adds up the workers' accumulators of each tag into its
// histogram in out.Hists.
func mergeWorkerAccs(out *IntervalLog, accs [][]*tagAcc) {
	for i, tag := range out.Tags {
		var total *tagAcc
		for w := range accs {
			a := accs[w][i]
			if a == nil {
				continue
			}
			if total == nil {
				total = a
				continue
			}
			total.merge(a)
		}
		if total != nil {
			out.Hists[tag] = total.histogram()
		}
	}
}

// headerValue reads the number after prefix in a header line such as
// "#[StartTime: 1700000000.000 (seconds since epoch), ...]".
func headerValue(line []byte, prefix string) (float64, bool) {
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0, false
	}
	rest := line[len(prefix):]
	end := bytes.IndexAny(rest, " ]")
	if end < 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(rest[:end]), 64)
	return v, err == nil
}

// splitHlogLine parses "[Tag=T,]start,length,max,payload".
func splitHlogLine(line []byte) (hlogLine, error) {
	var l hlogLine
	if bytes.HasPrefix(line, []byte("Tag=")) {
		c := bytes.IndexByte(line, ',')
		if c < 0 {
			return l, errors.New("tag without fields")
		}
		l.tag = string(line[4:c])
		line = line[c+1:]
	}
	fields := bytes.SplitN(line, []byte{','}, 4)
	if len(fields) != 4 {
		return l, fmt.Errorf("want start,length,max,histogram, got %d fields", len(fields))
	}
	var err error
	if l.startS, err = strconv.ParseFloat(string(fields[0]), 64); err != nil {
		return l, fmt.Errorf("start time: %w", err)
	}
	if l.lenS, err = strconv.ParseFloat(string(fields[1]), 64); err != nil {
		return l, fmt.Errorf("interval length: %w", err)
	}
	l.payload = fields[3]
	return l, nil
}

// countsLen is the length of the counts array of NewHist's
// geometry.
var countsLen = sync.OnceValue(func() int { return len(NewHist().Export().Counts) })

// tagAcc accumulates the counts of one tag's histograms: those of
// NewHist's geometry in counts, any others in other.
type tagAcc struct {
	counts []int64
	other  *hdr.Histogram
}

// merge adds b's counts and other histograms into a.
func (a *tagAcc) merge(b *tagAcc) {
	if b.counts != nil {
		if a.counts == nil {
			a.counts = b.counts
		} else {
			for i, c := range b.counts {
				a.counts[i] += c
			}
		}
	}
	if b.other != nil {
		a.mergeOther(b.other)
	}
}

// mergeOther adds a histogram of another geometry.
func (a *tagAcc) mergeOther(h *hdr.Histogram) {
	if a.other == nil {
		a.other = h
		return
	}
	a.other.Merge(h)
}

// histogram is what a accumulated, as one histogram (nil when nothing).
func (a *tagAcc) histogram() *hdr.Histogram {
	var h *hdr.Histogram
	if a.counts != nil {
		h = hdr.Import(&hdr.Snapshot{LowestTrackableValue: LowestNs, HighestTrackableValue: HighestNs,
			SignificantFigures: SigFigs, Counts: a.counts})
	}
	switch {
	case h == nil:
		return a.other
	case a.other != nil:
		h.Merge(a.other)
	}
	return h
}

// decoder decodes V2 compressed histograms, reusing its buffers and its
// zlib reader from line to line.
type decoder struct {
	raw     []byte
	zr      io.ReadCloser
	src     bytes.Reader
	payload []byte
}

// add decodes one base64 payload and adds its counts to a.
func (d *decoder) add(a *tagAcc, b64 []byte) error {
	n := base64.StdEncoding.DecodedLen(len(b64))
	if cap(d.raw) < n {
		d.raw = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(d.raw[:n], b64)
	if err != nil {
		return fmt.Errorf("histogram: %w", err)
	}
	raw := d.raw[:n]
	if len(raw) < 8 || int32(binary.BigEndian.Uint32(raw))&cookieMask != compressedCookie {
		return errors.New("histogram: not a V2 compressed histogram")
	}
	clen := int(int32(binary.BigEndian.Uint32(raw[4:])))
	if clen < 0 || clen > len(raw)-8 {
		return fmt.Errorf("histogram: compressed length %d exceeds the %d bytes present", clen, len(raw)-8)
	}
	d.src.Reset(raw[8 : 8+clen])
	if d.zr == nil {
		if d.zr, err = zlib.NewReader(&d.src); err != nil {
			return fmt.Errorf("histogram: %w", err)
		}
	} else if err := d.zr.(zlib.Resetter).Reset(&d.src, nil); err != nil {
		return fmt.Errorf("histogram: %w", err)
	}
	var head [payloadHeader]byte
	if _, err := io.ReadFull(d.zr, head[:]); err != nil {
		return fmt.Errorf("histogram header: %w", err)
	}
	if int32(binary.BigEndian.Uint32(head[:]))&cookieMask != payloadCookie {
		return errors.New("histogram: not a V2 payload")
	}
	plen := int(int32(binary.BigEndian.Uint32(head[4:])))
	sig := int32(binary.BigEndian.Uint32(head[12:]))
	lowest := int64(binary.BigEndian.Uint64(head[16:]))
	highest := int64(binary.BigEndian.Uint64(head[24:]))
	if plen < 0 || plen > 1<<24 {
		return fmt.Errorf("histogram: payload length %d", plen)
	}
	if cap(d.payload) < plen {
		d.payload = make([]byte, plen)
	}
	payload := d.payload[:plen]
	if _, err := io.ReadFull(d.zr, payload); err != nil {
		return fmt.Errorf("histogram payload: %w", err)
	}
	if lowest != LowestNs || highest != HighestNs || sig != SigFigs {
		// not scalelab's geometry: let the library decode and check it
		h, err := hdr.Decode(b64)
		if err != nil {
			return fmt.Errorf("histogram: %w", err)
		}
		a.mergeOther(h)
		return nil
	}
	if a.counts == nil {
		a.counts = make([]int64, countsLen())
	}
	return addCounts(a.counts, payload)
}

// addCounts adds a V2 payload (zig-zag LEB128 varints: a positive value is
// the count at the next index, a negative one a run of empty indexes) to
// counts.
func addCounts(counts []int64, p []byte) error {
	idx := 0
	for len(p) > 0 {
		var u uint64
		var shift uint
		i := 0
		for {
			if i >= len(p) {
				return errors.New("histogram payload: truncated number")
			}
			b := p[i]
			i++
			if i == 9 {
				u |= uint64(b) << shift
				break
			}
			u |= uint64(b&0x7f) << shift
			if b&0x80 == 0 {
				break
			}
			shift += 7
		}
		p = p[i:]
		v := int64(u>>1) ^ -int64(u&1)
		if v < 0 {
			if -v > int64(len(counts)-idx) || v == math.MinInt64 {
				return errors.New("histogram payload: empty run past the end of the counts")
			}
			idx += int(-v)
			continue
		}
		if idx >= len(counts) {
			return errors.New("histogram payload: count past the end of the counts")
		}
		counts[idx] += v
		idx++
	}
	return nil
}
