package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// pathPoints counts the points of a chart's lines (the M and L commands
// of its paths) and its isolated dots.
func pathPoints(c chart) []int {
	var n []int
	for _, p := range c.Paths {
		n = append(n, strings.Count(p.D, "M")+strings.Count(p.D, "L"))
	}
	return n
}

// A run whose last interval lasts 1 ms (the stop cuts it) charts ten
// points per line, not eleven: the last interval is folded into the one
// before it in every chart over time, even when only one operation has a
// row for it (which used to chart the other's throughput as a drop to
// zero), and in the charts drawn from concurrency.csv, telemetry.csv and
// the per-second transactions.
func TestLastShortIntervalIsNoPoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var ser, conc, tele strings.Builder
	ser.WriteString(metrics.SeriesHeader)
	conc.WriteString(metrics.ConcurrencyHeader())
	tele.WriteString("t_s,tier,node,pid,cpu_cores,user_cores,sys_cores,rss_bytes\n")
	var per []results.TxSecond
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&ser, "%d.000,1.000,read,1000,0,1000.0,1.0,2.0,3.0,,0,8,false,,,\n", i)
		fmt.Fprintf(&ser, "%d.000,1.000,update,500,0,500.0,1.5,2.5,4.0,,0,8,false,,,\n", i)
		fmt.Fprintf(&conc, "%d.000,1.000,4.0,8,8,false\n", i)
		fmt.Fprintf(&tele, "%d.000,generator,scalelab,1,0.5,0.4,0.1,1000000\n", i)
		m := 1.0
		per = append(per, results.TxSecond{T: float64(i), N: 1500, MeanMs: &m})
	}
	ser.WriteString("10.001,0.001,read,1,0,1000.0,,,5.0,,0,0,false,,,\n") // update has no row for it
	conc.WriteString("10.001,0.001,0.01,1,0,false\n")
	tele.WriteString("10.001,generator,scalelab,1,2.0,1.0,1.0,1000000\n")
	spike := 5.0
	per = append(per, results.TxSecond{T: 10.001, N: 1, MeanMs: &spike})
	for name, data := range map[string]string{results.SeriesFile: ser.String(), results.ConcurrencyFile: conc.String(), results.TelemetryFile: tele.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &results.Run{Status: results.StatusOK, Scenario: "s", Engine: "e", Load: results.Load{Model: "closed"},
		Summary:      map[string]metrics.OpSummary{"read": {}, "update": {}},
		Concurrency:  &results.Concurrency{MeanInFlight: 4, MaxInFlight: 8},
		Transactions: &results.Transactions{PerSecond: per}}
	v := buildRunView(r, dir)
	charts := map[string]chart{"throughput": v.Throughput}
	for _, c := range v.Latency {
		charts[c.Title] = c
	}
	if v.Concurrency != nil {
		charts["concurrency"] = *v.Concurrency
	}
	for _, c := range append(append(v.ScenCharts, v.TeleCharts...), txCharts(v)...) {
		charts[c.Title] = c
	}
	for _, want := range []string{"throughput", "read: latency over time", "concurrency", "CPU per node over time",
		"Mean request duration over time (Tsung's mean transaction duration)"} {
		if _, ok := charts[want]; !ok {
			t.Errorf("no chart %q among %d", want, len(charts))
		}
	}
	for name, c := range charts {
		for i, n := range pathPoints(c) {
			if n != 10 {
				t.Errorf("%s: line %d has %d points, want 10 (one per whole interval)", name, i, n)
			}
		}
		if len(c.Circles) > 0 {
			t.Errorf("%s: %d isolated dots, want none", name, len(c.Circles))
		}
	}
	rows := bucketSeries(readSeriesFile(t, dir), 1)
	last := rows["read"][len(rows["read"])-1]
	if last.T != 10 || last.Count != 1001 || last.Sessions != 8 {
		t.Errorf("read's last row %+v: want the 1 ms interval folded into the 10th, at its end", last)
	}
	tl := timeline(rows, 1)
	if end := timelineEnd(tl); len(tl) != 10 || end != 10 {
		t.Errorf("timeline of %d ticks ending at %v, want 10 ending at 10 s", len(tl), end)
	}
	_, tot := align(rows["update"], tl, func(r seriesRow) float64 { return rate(r.Count, r) }, 0)
	if tot[len(tot)-1] != 500 {
		t.Errorf("update's throughput at the end %v, want 500 (no drop)", tot[len(tot)-1])
	}
}

// tooShort is the rule of every chart over time: shorter than a tenth of
// the run's interval.
func TestTooShortAndFoldShort(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		l, step float64
		want    bool
	}{{0.001, 1, true}, {0.099, 1, true}, {0.1, 1, false}, {0.995, 1, false}, {0.004, 0.05, true}, {0.01, 0.05, false}, {0, 1, false}} {
		if got := tooShort(c.l, c.step); got != c.want {
			t.Errorf("tooShort(%v, %v) = %v, want %v", c.l, c.step, got, c.want)
		}
	}
	into := foldShort([]float64{0.004, 1, 2, 3, 3.002})
	if fmt.Sprint(into) != "[-1 1 2 3 3]" {
		t.Errorf("foldShort = %v, want [-1 1 2 3 3]", into)
	}
}

func readSeriesFile(t *testing.T, dir string) *series {
	t.Helper()
	s, err := readSeries(filepath.Join(dir, results.SeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func txCharts(v *runView) []chart {
	if v.Tx == nil {
		return nil
	}
	return v.Tx.Charts
}

// A wall-clock second of the cache report that overlaps the load by a few
// milliseconds (the load ended just after it began) is no point of the
// cache charts: its reads were mostly after the load.
func TestCacheSecondAtTheStopIsNoPoint(t *testing.T) {
	t.Parallel()
	var per []cacheSecond
	for i := 0; i < 4; i++ {
		per = append(per, cacheSecond{Unix: 1000 + float64(i), Hits: 90, Misses: 10, StaleReads: 5})
	}
	// the load ran from 1000.0 to 1003.005: the fourth second overlaps it by 5 ms
	pts := cachePoints(per, 1000, 3.005, 1)
	if len(pts) != 3 || pts[2].X != 3 {
		t.Errorf("points %+v, want 3 ending at 3 s", pts)
	}
}
