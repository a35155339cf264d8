package metrics

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// syncEvery is how often streamed files are fsynced; each interval is
// written (one write call, whole lines) as soon as it closes, so a crash
// loses at most the interval in progress, and a machine crash at most
// syncEvery.
const syncEvery = 5 * time.Second

// stream is an append-only file written a whole interval at a time.
type stream struct {
	f        *os.File
	buf      bytes.Buffer
	lastSync time.Time
}

func createStream(path string) (*stream, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &stream{f: f, lastSync: time.Now()}, nil
}

// createCSV creates path and writes header, its first line.
func createCSV(path, header string) (*stream, error) {
	s, err := createStream(path)
	if err != nil {
		return nil, err
	}
	s.buf.WriteString(header)
	if err := s.commit(); err != nil {
		s.f.Close()
		return nil, err
	}
	return s, nil
}

// commit writes the buffered lines in one call and syncs when due.
func (s *stream) commit() error {
	if s.buf.Len() > 0 {
		if _, err := s.f.Write(s.buf.Bytes()); err != nil {
			return fmt.Errorf("write %s: %w", s.f.Name(), err)
		}
		s.buf.Reset()
	}
	if time.Since(s.lastSync) >= syncEvery {
		s.lastSync = time.Now()
		if err := s.f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", s.f.Name(), err)
		}
	}
	return nil
}

// Close syncs and closes the file.
func (s *stream) Close() error {
	if err := s.commit(); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", s.f.Name(), err)
	}
	return s.f.Close()
}

// HlogSink writes intervals.hlog: the HdrHistogram interval log format
// (version 1.3), one line per operation per interval tagged with the
// operation name, "<op>.service" for service times in open models and
// "<op>.error" for the latencies of failed operations.
// Values are nanoseconds; the max column is in milliseconds.
type HlogSink struct {
	s *stream
	w *hdr.HistogramLogWriter
}

// NewHlogSink creates path and writes the log header.
func NewHlogSink(path string, start time.Time) (*HlogSink, error) {
	s, err := createStream(path)
	if err != nil {
		return nil, err
	}
	w := hdr.NewHistogramLogWriter(&s.buf)
	ms := start.UnixMilli()
	w.SetBaseTime(ms)
	_ = w.OutputComment("scalelab interval log: values in nanoseconds, one histogram per operation per 1 s interval, tagged by operation")
	_ = w.OutputLogFormatVersion()
	_ = w.OutputStartTime(ms)
	_ = w.OutputBaseTime(ms)
	_ = w.OutputLegend()
	return &HlogSink{s: s, w: w}, s.commit()
}

// Interval writes one line per operation that has data in iv.
func (h *HlogSink) Interval(iv *Interval) error {
	base := h.w.BaseTime()
	startMs := base + iv.StartNs/1e6
	endMs := base + iv.EndNs/1e6
	for i := range iv.Ops {
		o := &iv.Ops[i]
		if err := h.line(o.Lat, o.Name, startMs, endMs); err != nil {
			return err
		}
		if o.Svc != nil {
			if err := h.line(o.Svc, o.Name+".service", startMs, endMs); err != nil {
				return err
			}
		}
		if err := h.line(o.Err, o.Name+".error", startMs, endMs); err != nil {
			return err
		}
	}
	return h.s.commit()
}

func (h *HlogSink) line(hist *hdr.Histogram, tag string, startMs, endMs int64) error {
	if hist.TotalCount() == 0 {
		return nil
	}
	hist.SetTag(tag)
	hist.SetStartTimeMs(startMs)
	hist.SetEndTimeMs(endMs)
	if err := h.w.OutputIntervalHistogram(hist); err != nil {
		return fmt.Errorf("hlog %s: %w", tag, err)
	}
	return nil
}

// Close flushes and closes the log.
func (h *HlogSink) Close() error { return h.s.Close() }

// SeriesHeader is the header line of series.csv.
//
// The lag columns are the schedule lag of the interval (how late its
// operations started against an open model's schedule, every operation
// together), repeated on each of the interval's rows; they are empty for
// a closed model and in a merged test (lag percentiles stay per segment).
const SeriesHeader = "t_s,interval_s,op,count,errors,throughput_per_s,p50_ms,p99_ms,max_ms,service_p99_ms,late,sessions,warmup,lag_p50_ms,lag_p99_ms,lag_max_ms\n"

// SeriesSink writes series.csv: per interval and operation, the count,
// errors and latency percentiles (empty where the count cannot support
// the percentile).
type SeriesSink struct{ s *stream }

// NewSeriesSink creates path and writes the header.
func NewSeriesSink(path string) (*SeriesSink, error) {
	s, err := createCSV(path, SeriesHeader)
	if err != nil {
		return nil, err
	}
	return &SeriesSink{s: s}, nil
}

// Interval writes one row per operation with data in iv.
func (ss *SeriesSink) Interval(iv *Interval) error {
	b := &ss.s.buf
	secs := float64(iv.EndNs-iv.StartNs) / 1e9
	lag := LagFiguresOf(iv.Lag)
	for i := range iv.Ops {
		o := &iv.Ops[i]
		n, e := o.Count(), o.Errors()
		if n == 0 && e == 0 {
			continue
		}
		var maxMs *float64
		if o.Lat != nil && o.Lat.TotalCount() > 0 {
			maxMs = ptr(nsToMs(o.Lat.Max()))
		}
		FormatSeriesRow(b, float64(iv.EndNs)/1e9, secs, o.Name, n, e, PercentileMs(o.Lat, 50), PercentileMs(o.Lat, 99), maxMs,
			PercentileMs(o.Svc, 99), o.Late, iv.Sessions, iv.Warmup, lag)
	}
	return ss.s.commit()
}

// Close flushes and closes the file.
func (ss *SeriesSink) Close() error { return ss.s.Close() }

func fmtMs(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}

// SamplesSink writes samples.csv: every operation, one row each.
type SamplesSink struct {
	s   *stream
	ops []string
}

// NewSamplesSink creates path and writes the header.
func NewSamplesSink(path string, ops []string) (*SamplesSink, error) {
	s, err := createCSV(path, "end_s,op,outcome,latency_ms,service_ms,warmup\n")
	if err != nil {
		return nil, err
	}
	return &SamplesSink{s: s, ops: ops}, nil
}

// Interval writes iv's samples.
func (ss *SamplesSink) Interval(iv *Interval) error {
	line := make([]byte, 0, 96)
	for _, sm := range iv.Samples {
		line = strconv.AppendFloat(line[:0], float64(sm.EndNs)/1e9, 'f', 6, 64)
		line = append(line, ',')
		line = append(line, ss.ops[sm.Op]...)
		line = append(line, ',')
		line = append(line, sm.Class.String()...)
		line = append(line, ',')
		line = strconv.AppendFloat(line, float64(sm.LatencyNs)/1e6, 'f', 3, 64)
		line = append(line, ',')
		line = strconv.AppendFloat(line, float64(sm.ServiceNs)/1e6, 'f', 3, 64)
		line = append(line, ',')
		line = strconv.AppendBool(line, iv.Warmup)
		line = append(line, '\n')
		ss.s.buf.Write(line)
	}
	return ss.s.commit()
}

// Close flushes and closes the file.
func (ss *SamplesSink) Close() error { return ss.s.Close() }
