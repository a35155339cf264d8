package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
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
	for op, rows := range s.Rows {
		s.Rows[op] = mergeShort(rows)
	}
	return s, nil
}

// mergeShort folds an interval shorter than a quarter second (the last
// one, cut by the stop) into the operation's interval just before it, so
// that a few operations over a few milliseconds do not chart as a huge
// rate.
func mergeShort(rows []seriesRow) []seriesRow {
	out := make([]seriesRow, 0, len(rows))
	for _, r := range rows {
		n := len(out)
		if n == 0 || r.IntervalS <= 0 || r.IntervalS >= 0.25 || out[n-1].Warmup != r.Warmup || math.Abs(out[n-1].T-(r.T-r.IntervalS)) > 0.002 {
			out = append(out, r)
			continue
		}
		p := &out[n-1]
		p.T = r.T
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
		p.Sessions = r.Sessions
	}
	return out
}
