package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// seriesRow is one interval of one operation from series.csv. Latencies
// are NaN where the interval's count could not support them.
type seriesRow struct {
	T, IntervalS              float64
	Count, Errors, Late       int64
	Tput                      float64
	P50, P99, Max, ServiceP99 float64
	Sessions                  int64
	Warmup                    bool
	// The interval's schedule lag (every operation together, the same
	// on each operation's row); NaN for a closed model.
	LagP50, LagP99, LagMax float64
}

// SeriesRow is one interval of one operation from series.csv.
type SeriesRow = seriesRow

// ReadSeries reads series.csv: the operations in order of first
// appearance and each one's rows in time order (a torn last line is
// ignored).
func ReadSeries(path string) (ops []string, rows map[string][]SeriesRow, err error) {
	s, err := readSeries(path)
	if err != nil {
		return nil, nil, err
	}
	return s.Ops, s.Rows, nil
}

// series is series.csv read per operation.
type series struct {
	Ops  []string               // in order of first appearance
	Rows map[string][]seriesRow // per operation, in time order
	Torn bool                   // a torn last line was ignored
	Step float64                // the run's interval length in seconds (the median)
}

// readSeries reads series.csv. Columns are found by their header names,
// so files with fewer or more columns still read; a torn last line (a
// crash mid-write) is ignored and flagged.
func readSeries(path string) (*series, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read series: %w", err)
	}
	return parseSeries(data)
}

func parseSeries(data []byte) (*series, error) {
	s := &series{Rows: map[string][]seriesRow{}}
	if n := len(data); n > 0 && data[n-1] != '\n' {
		data = data[:bytes.LastIndexByte(data, '\n')+1]
		s.Torn = true
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return s, nil
	}
	col := map[string]int{}
	for i, name := range strings.Split(strings.TrimSpace(string(data[:nl])), ",") {
		col[name] = i
	}
	for _, need := range []string{"t_s", "op", "count"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("series.csv: no %s column in the header", need)
		}
	}
	data = data[nl+1:]
	fields := make([]string, 0, 16)
	for lineNo := 2; len(data) > 0; lineNo++ {
		i := bytes.IndexByte(data, '\n')
		line := strings.TrimRight(string(data[:i]), "\r")
		data = data[i+1:]
		if line == "" {
			continue
		}
		fields = fields[:0]
		for {
			c := strings.IndexByte(line, ',')
			if c < 0 {
				fields = append(fields, line)
				break
			}
			fields = append(fields, line[:c])
			line = line[c+1:]
		}
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(fields) {
				return fields[i]
			}
			return ""
		}
		num := func(name string) float64 {
			v, err := strconv.ParseFloat(get(name), 64)
			if err != nil {
				return math.NaN()
			}
			return v
		}
		integer := func(name string) int64 {
			v, _ := strconv.ParseInt(get(name), 10, 64)
			return v
		}
		t, err := strconv.ParseFloat(get("t_s"), 64)
		if err != nil {
			return nil, fmt.Errorf("series.csv line %d: t_s %q is not a number", lineNo, get("t_s"))
		}
		r := seriesRow{T: t, IntervalS: num("interval_s"), Count: integer("count"), Errors: integer("errors"),
			Late: integer("late"), Tput: num("throughput_per_s"), P50: num("p50_ms"), P99: num("p99_ms"),
			Max: num("max_ms"), ServiceP99: num("service_p99_ms"), Sessions: integer("sessions"),
			Warmup: get("warmup") == "true", LagP50: num("lag_p50_ms"), LagP99: num("lag_p99_ms"), LagMax: num("lag_max_ms")}
		if math.IsNaN(r.Tput) && r.IntervalS > 0 {
			r.Tput = float64(r.Count) / r.IntervalS
		}
		op := get("op")
		if _, ok := s.Rows[op]; !ok {
			s.Ops = append(s.Ops, op)
		}
		s.Rows[op] = append(s.Rows[op], r)
	}
	step := seriesStep(s.Rows)
	for op, rows := range s.Rows {
		s.Rows[op] = mergeShort(rows, step)
	}
	s.Step = step
	return s, nil
}

// tooShort is the one rule of every chart over time: an interval shorter
// than a tenth of the run's interval length step (the last one, cut by the
// run's stop, often lasts a millisecond) is never drawn as a point of its
// own, since a few operations over a few milliseconds chart as a spike or
// a drop that never happened.
func tooShort(length, step float64) bool {
	return length > 0 && step > 0 && length < step/10
}

// seriesStep is the run's interval length: the median length of the rows'
// intervals (0 without any).
func seriesStep(rows map[string][]seriesRow) float64 {
	var ls []float64
	for _, rs := range rows {
		for _, r := range rs {
			if r.IntervalS > 0 {
				ls = append(ls, r.IntervalS)
			}
		}
	}
	return median(ls)
}

// median is the middle value of vs (0 for none); vs is sorted in place.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	sort.Float64s(vs)
	return vs[len(vs)/2]
}

// mergeShort folds an interval too short to chart (tooShort against step)
// into the operation's interval just before it: its counts are added and
// its percentiles taken as an upper bound, and the merged row keeps the
// earlier interval's end so that every operation's rows stay on the same
// timeline. A short interval with no interval just before it (the
// operation's first, or after a gap, or across the end of the warm-up) is
// left out.
func mergeShort(rows []seriesRow, step float64) []seriesRow {
	out := make([]seriesRow, 0, len(rows))
	for _, r := range rows {
		if !tooShort(r.IntervalS, step) {
			out = append(out, r)
			continue
		}
		n := len(out)
		if n == 0 || out[n-1].Warmup != r.Warmup || math.Abs(out[n-1].T-(r.T-r.IntervalS)) > 0.002 {
			continue
		}
		p := &out[n-1]
		p.IntervalS += r.IntervalS
		p.Count += r.Count
		p.Errors += r.Errors
		p.Late += r.Late
		p.Tput = float64(p.Count) / p.IntervalS
		if math.IsNaN(p.P50) {
			p.P50 = r.P50
		}
		p.P99, p.Max, p.ServiceP99 = nanMax(p.P99, r.P99), nanMax(p.Max, r.Max), nanMax(p.ServiceP99, r.ServiceP99)
		p.LagP50, p.LagP99, p.LagMax = nanMax(p.LagP50, r.LagP50), nanMax(p.LagP99, r.LagP99), nanMax(p.LagMax, r.LagMax)
	}
	return out
}

// foldShort applies tooShort to a sequence of points placed at their
// interval's end, ts ascending (the first interval from 0), whose step is
// the median interval: into[i] is i for a point long enough to chart, the
// index of the kept point just before it for a short point to fold into
// it, or -1 for a short point with none before it (left out).
func foldShort(ts []float64) (into []int) {
	lens := make([]float64, len(ts))
	for i, t := range ts {
		lens[i] = t
		if i > 0 {
			lens[i] = t - ts[i-1]
		}
	}
	step := median(append([]float64(nil), lens...))
	into = make([]int, len(ts))
	last := -1
	for i, l := range lens {
		if !tooShort(l, step) {
			last = i
		}
		into[i] = last
	}
	return into
}
