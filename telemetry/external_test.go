package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/results"
)

// TestAddExternal: a node another system observed counts like a sampled
// one from the measured window only (its samples before Measure and
// after Stop are written but not judged), is judged at its limit, is
// written to telemetry.csv, and its exporter's figures reach
// engine_stats.csv and the summary.
func TestAddExternal(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	s, err := Start(Config{Dir: dir, Start: start, Interval: 50 * time.Millisecond, Windows: true})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(120 * time.Millisecond)
	s.Measure()
	measAt := time.Now()
	time.Sleep(400 * time.Millisecond)
	s.Stop()
	var pts []ExternalPoint
	for at := measAt.Add(-200 * time.Millisecond); at.Before(measAt.Add(700 * time.Millisecond)); at = at.Add(100 * time.Millisecond) {
		pts = append(pts, ExternalPoint{At: at, Cores: 0.5, RSS: 1 << 20})
	}
	stats := []ExternalStat{{Tier: "store", Name: "prom.pg_stat_database_xact_commit", Points: []StatPoint{{At: measAt, Value: 10}, {At: measAt.Add(time.Second), Value: 90}}}}
	if err := s.AddExternal([]External{{Tier: "store", Name: "db1:9256/pg", Source: "prometheus", Limits: &results.Limits{CPUs: 0.5}, Points: pts}}, stats); err != nil {
		t.Fatal(err)
	}
	s.SetObserved([]results.TelemetrySource{{Kind: "prometheus", URL: "http://prom:9090", Nodes: 1}}, nil)
	tel := s.Summary(100)
	var n *results.NodeUsage
	for i := range tel.Nodes {
		if tel.Nodes[i].Tier == "store" {
			n = &tel.Nodes[i]
		}
	}
	if n == nil || n.Source != "prometheus" || n.PID != 0 || n.PeakRSSBytes != 1<<20 {
		t.Fatalf("external node %+v", n)
	}
	// points every 100 ms from 200 ms before Measure to 400 ms after Stop:
	// the measured ones are those whose interval's middle is in between
	if n.CPUMeanCores != 0.5 || n.AtLimitShare != 1 || n.CPUMaxCores != 0.5 {
		t.Errorf("external usage %+v", n)
	}
	if tel.Saturated == nil || tel.Saturated.Node != "db1:9256/pg" || !strings.Contains(tel.Saturation, "from prometheus's figures") {
		t.Errorf("verdict %q", tel.Saturation)
	}
	if tel.Cost.SampledNodes != 1 || len(tel.Sources) != 1 {
		t.Errorf("cost %+v, sources %+v", tel.Cost, tel.Sources)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, results.TelemetryFile))
	rows := strings.Count(string(csv), ",store,db1:9256/pg,0,0.5000,,,1048576,,,,,")
	if rows != len(pts)-1 {
		t.Errorf("%d rows of the external node in telemetry.csv, want %d:\n%s", rows, len(pts)-1, csv)
	}
	if !strings.Contains(string(csv), ",true\n") || !strings.Contains(string(csv), ",false\n") {
		t.Errorf("telemetry.csv without measured and unmeasured rows of the node:\n%s", csv)
	}
	es, err := ReadEngineStats(filepath.Join(dir, results.EngineStatsFile))
	if err != nil || es["store/prom.pg_stat_database_xact_commit"].Last != 90 {
		t.Errorf("engine stats %v %v", es, err)
	}
	if len(tel.EngineStats) != 1 || tel.EngineStats[0].First != 10 {
		t.Errorf("summary's engine stats %+v", tel.EngineStats)
	}
}

// TestExternalNoSamples: a tier whose series has no point in the
// measured window (a run shorter than the scrape interval) is named in
// NoSamples and left out of Nodes and Tiers, whose zeros would read as
// measured.
func TestExternalNoSamples(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(Config{Dir: dir, Start: time.Now(), Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s.Measure()
	time.Sleep(120 * time.Millisecond)
	s.Stop()
	// one point: no interval, so no sample
	if err := s.AddExternal([]External{{Tier: "store", Name: "db1:9256/pg", Source: "prometheus", Points: []ExternalPoint{{At: time.Now(), Cores: 0.5, RSS: 1 << 20}}}}, nil); err != nil {
		t.Fatal(err)
	}
	tel := s.Summary(100)
	if len(tel.NoSamples) != 1 || tel.NoSamples[0] != "store" {
		t.Fatalf("no_samples %v", tel.NoSamples)
	}
	for _, n := range tel.Nodes {
		if n.Tier == "store" {
			t.Errorf("a node of a tier without samples: %+v", n)
		}
	}
	for _, x := range tel.Tiers {
		if x.Tier == "store" {
			t.Errorf("a tier without samples: %+v", x)
		}
	}
}
