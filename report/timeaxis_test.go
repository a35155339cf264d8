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

// Every chart over time of one run shares one time axis, even when an
// operation's last intervals have too few samples for a percentile (its
// latency line ends early) and the run's last interval is too short for a
// rate (the throughput line ends early).
func TestRunChartsShareOneTimeAxis(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(metrics.SeriesHeader)
	for i := 1; i <= 20; i++ {
		p99 := "2.5"
		if i > 14 {
			p99 = "" // too few samples: no percentile
		}
		fmt.Fprintf(&b, "%d.000,1.000,read,100,1,100.0,1.2,%s,3.0,,0,0,false\n", i, p99)
		fmt.Fprintf(&b, "%d.000,1.000,write,50,0,50.0,2.0,4.0,5.0,,0,0,false\n", i)
	}
	b.WriteString("20.100,0.100,read,3,0,30.0,,,3.0,,0,0,false\n")
	if err := os.WriteFile(filepath.Join(dir, results.SeriesFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &results.Run{Status: results.StatusOK, Scenario: "s", Engine: "e", Load: results.Load{Model: "closed"},
		Summary: map[string]metrics.OpSummary{"read": {}, "write": {}}}
	v := buildRunView(r, dir)
	charts := map[string]*chart{"throughput": &v.Throughput, "errors": v.Errors}
	for i := range v.Latency {
		charts[v.Latency[i].Title] = &v.Latency[i]
	}
	if len(charts) != 4 || v.Errors == nil {
		t.Fatalf("want 4 time charts (2 latency, throughput, errors), got %d", len(charts))
	}
	var hi float64
	for name, c := range charts {
		if c.frame == nil {
			t.Fatalf("%s: not drawn as a time chart (%s)", name, c.Empty)
		}
		if c.frame.xa.hi < 20.1 {
			t.Errorf("%s: time axis ends at %v, before the run's last interval (20.1 s)", name, c.frame.xa.hi)
		}
		if hi == 0 {
			hi = c.frame.xa.hi
		} else if c.frame.xa.hi != hi {
			t.Errorf("%s: time axis ends at %v, another chart's at %v", name, c.frame.xa.hi, hi)
		}
	}
}
