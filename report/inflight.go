package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/scalelab/scalelab/results"
)

// inFlightRow is one interval of concurrency.csv.
type inFlightRow struct {
	T, IntervalS float64
	Mean         float64
	Max, Users   int64
	Warmup       bool
}

// readInFlight reads concurrency.csv (columns found by name; a torn last
// line is ignored).
func readInFlight(path string) ([]inFlightRow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseInFlight(data)
}

func parseInFlight(data []byte) ([]inFlightRow, error) {
	if n := len(data); n > 0 && data[n-1] != '\n' {
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return nil, nil
	}
	col := map[string]int{}
	for i, name := range strings.Split(lines[0], ",") {
		col[name] = i
	}
	for _, need := range []string{"t_s", "in_flight_mean", "in_flight_max"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("concurrency.csv: no %s column in the header", need)
		}
	}
	var out []inFlightRow
	for i, line := range lines[1:] {
		f := strings.Split(strings.TrimSpace(line), ",")
		get := func(name string) string {
			if j, ok := col[name]; ok && j < len(f) {
				return f[j]
			}
			return ""
		}
		t, err := strconv.ParseFloat(get("t_s"), 64)
		if err != nil {
			return nil, fmt.Errorf("concurrency.csv line %d: t_s %q is not a number", i+2, get("t_s"))
		}
		r := inFlightRow{T: t, Warmup: get("warmup") == "true"}
		r.IntervalS, _ = strconv.ParseFloat(get("interval_s"), 64)
		r.Mean, _ = strconv.ParseFloat(get("in_flight_mean"), 64)
		r.Max, _ = strconv.ParseInt(get("in_flight_max"), 10, 64)
		r.Users, _ = strconv.ParseInt(get("users"), 10, 64)
		out = append(out, r)
	}
	return out, nil
}

// inFlightChart draws the operations in flight over time (mean and most
// at once per interval) beside the users active: the run's real
// concurrency, which a thread-group load's user count overstates.
func inFlightChart(r *results.Run, dir string, xMax float64) (*chart, string) {
	rows, err := readInFlight(filepath.Join(dir, results.ConcurrencyFile))
	if err != nil {
		return nil, missingNote(results.ConcurrencyFile, err) + ": the chart of operations in flight is left out."
	}
	if len(rows) == 0 {
		return nil, ""
	}
	rows = chartableInFlight(rows)
	if len(rows) == 0 {
		return nil, ""
	}
	n := len(rows)
	xs, mean, most, users := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, row := range rows {
		xs[i], mean[i], most[i], users[i] = row.T, row.Mean, float64(row.Max), float64(row.Users)
	}
	note := "Per interval: the mean number of operations in flight (the time they spent in flight divided by the interval's length) and the most at once, beside the users active at the interval's end."
	if c := r.Concurrency; c != nil {
		note += fmt.Sprintf(" Over the measured window: mean %s, max %d in flight", fmtNum(c.MeanInFlight), c.MaxInFlight)
		if c.Users > 0 {
			note += fmt.Sprintf(", with %d users", c.Users)
		}
		note += "."
		if c.MaxIsBound {
			note += " Merged segments: the max is the sum of the segments' maxima, an upper bound."
		}
	}
	spec := lineSpec{Title: "Operations in flight over time", XLabel: "time since start", XZero: true, XMax: math.Max(xMax, xs[n-1]), YLabel: "operations / users", XFmt: fmtSeconds,
		Bands: warmupBand(r.Load.WarmupS), Note: note, Series: []lineSeries{
			{Name: "mean in flight", X: xs, Y: mean, Color: color(0)},
			{Name: "most in flight", X: xs, Y: most, Color: color(1), Dash: true},
			{Name: "users active", X: xs, Y: users, Color: color(3)},
		}}
	c := spec.render()
	return &c, ""
}

// chartableInFlight leaves out the intervals too short to chart
// (tooShort): the mean in flight over the last millisecond of a run is no
// point of its own, and the most at once folds into the interval before.
func chartableInFlight(rows []inFlightRow) []inFlightRow {
	ts := make([]float64, len(rows))
	for i, r := range rows {
		ts[i] = r.T
	}
	out := make([]inFlightRow, 0, len(rows))
	for i, j := range foldShort(ts) {
		switch {
		case j == i:
			out = append(out, rows[i])
		case j >= 0 && len(out) > 0:
			out[len(out)-1].Max = max(out[len(out)-1].Max, rows[i].Max)
		}
	}
	return out
}

// inFlightText is the one line of a run's concurrency: operations in
// flight against the users.
func inFlightText(c *results.Concurrency) string {
	most := fmt.Sprint(c.MaxInFlight)
	if c.MaxIsBound {
		most = "at most " + most
	}
	s := fmt.Sprintf("mean %.2f, max %s operations at once", c.MeanInFlight, most)
	if c.Users > 0 {
		s += fmt.Sprintf(" (%d users)", c.Users)
	}
	return s
}

// ConcurrencyRow is one interval of concurrency.csv.
type ConcurrencyRow = inFlightRow

// ReadConcurrency reads concurrency.csv (a torn last line is ignored).
func ReadConcurrency(path string) ([]ConcurrencyRow, error) { return readInFlight(path) }
