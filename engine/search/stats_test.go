package search_test

import (
	"path/filepath"
	"testing"

	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/telemetry"
)

// checkTelemetry checks a run on a 2-node cluster: both nodes sampled
// (CPU and memory in run.json), and the engine's own stats recorded for
// both, each node's indexing total growing.
func checkTelemetry(t *testing.T, name, dir string, doc *results.Run) {
	t.Helper()
	tel := doc.Telemetry
	if tel == nil || tel.Samples < 2 {
		t.Fatalf("telemetry %+v", tel)
	}
	nodes := map[string]results.NodeUsage{}
	for _, n := range tel.Nodes {
		if n.Tier == "store" {
			nodes[n.Node] = n
		}
	}
	for _, n := range []string{"node1", "node2"} {
		if u, ok := nodes[n]; !ok || u.CPUMaxCores <= 0 || u.PeakRSSBytes < 100<<20 || u.MaxThreads < 10 {
			t.Errorf("%s: %+v", n, u)
		}
	}
	prefix := "os."
	if name == search.Elasticsearch {
		prefix = "es."
	}
	stats, err := telemetry.ReadEngineStats(filepath.Join(dir, results.EngineStatsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"node1", "node2"} {
		if e := stats["store/"+prefix+n+".indexing_total"]; e.Last <= e.First {
			t.Errorf("%s.indexing_total did not grow: %+v", n, e)
		}
	}
	if len(tel.EngineErrors) > 0 {
		t.Errorf("engine stat errors %v", tel.EngineErrors)
	}
	t.Logf("%s: node1 %.2f cores, node2 %.2f cores; saturation: %s", name, nodes["node1"].CPUMeanCores, nodes["node2"].CPUMeanCores, tel.Saturation)
}
