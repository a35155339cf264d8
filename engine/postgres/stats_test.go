package postgres_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/telemetry"
)

// checkTelemetry checks a run on a primary and a replica: both nodes
// sampled every second (rows in telemetry.csv, CPU in run.json), and the
// engine stats of both servers recorded, the primary's commits growing.
func checkTelemetry(t *testing.T, dir string, r *results.Run) {
	t.Helper()
	tel := r.Telemetry
	if tel == nil || tel.Samples < 3 {
		t.Fatalf("telemetry %+v", tel)
	}
	roles := map[string]results.NodeUsage{}
	for _, n := range tel.Nodes {
		if n.Tier == "store" {
			roles[n.Role] = n
		}
	}
	p, rep := roles["primary"], roles["replica"]
	if p.Node != "node1" || rep.Node != "node2" || p.CPUMeanCores <= 0 || p.PeakRSSBytes <= 0 || rep.PeakRSSBytes <= 0 || p.WriteBytes <= 0 {
		t.Errorf("store nodes %+v", tel.Nodes)
	}
	t.Logf("primary %.2f cores (max %.2f), replica %.2f cores; saturation: %s; sampling cost %.3f ms per sample",
		p.CPUMeanCores, p.CPUMaxCores, rep.CPUMeanCores, tel.Saturation, tel.Cost.PerSampleMs)
	b, err := os.ReadFile(filepath.Join(dir, results.TelemetryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{",store,node1,", ",store,node2,", ",generator,scalelab,", ",host,cpu,"} {
		if c := strings.Count(string(b), n); c < 3 {
			t.Errorf("telemetry.csv: %d rows of %s", c, n)
		}
	}
	stats, err := telemetry.ReadEngineStats(filepath.Join(dir, results.EngineStatsFile))
	if err != nil {
		t.Fatal(err)
	}
	c := stats["store/pg.xact_commit"]
	commits := c.Last > c.First
	_, replica := stats["store/pg.replica1.tup_returned"]
	if !commits || !replica || len(tel.EngineErrors) > 0 {
		t.Errorf("engine stats: commits growing %t, replica sampled %t, errors %v", commits, replica, tel.EngineErrors)
	}
}
