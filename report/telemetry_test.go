package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
)

const teleCSV = `t_s,tier,node,pid,cpu_cores,user_cores,sys_cores,rss_bytes,read_bytes_per_s,write_bytes_per_s,threads,throttled_share,measured
1.000,store,node1,10,0.1990,0.1,0.0990,60000000,0,1000,14,1.000,true
1.000,generator,scalelab,11,0.1000,0.05,0.05,30000000,0,0,9,,true
1.000,host,cpu,0,0.5000,,,,,,,,true
2.000,store,node1,10,0.2000,0.1,0.1000,61000000,0,1000,14,1.000,true
2.000,generator,scalelab,11,0.1100,0.05,0.06,30000000,0,0,9,,true
2.000,host,cpu,0,0.5200,,,,,,,,true
3.0,store,no`

// TestTelemetryView draws CPU and memory per node from telemetry.csv
// (ignoring a torn last line), with the node's CPU limit as a reference
// line and its tables from run.json; a run that died before its summary
// still gets the charts, and says its saturation was not judged.
func TestTelemetryView(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.TelemetryFile), []byte(teleCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	nodes, host, err := readTelemetry(filepath.Join(dir, results.TelemetryFile))
	if err != nil || len(nodes) != 2 || host == nil || len(nodes[0].t) != 2 || nodes[0].node != "node1" || nodes[1].tier != "generator" {
		t.Fatalf("read: %v %+v %+v", err, nodes, host)
	}
	r := &results.Run{Status: results.StatusRunning, Summary: nil}
	v := buildRunView(r, dir)
	if len(v.TeleCharts) != 2 || !strings.HasPrefix(v.Saturation, "not judged") {
		t.Fatalf("dead run: %d charts, saturation %q", len(v.TeleCharts), v.Saturation)
	}
	r.Telemetry = &results.Telemetry{HostCPUs: 2, Saturation: "store node1 saturated: at its CPU limit of 0.2 cores",
		Nodes:       []results.NodeUsage{{Tier: "store", Node: "node1", PID: 10, Source: "cgroup v1", Limits: &results.Limits{CPUs: 0.2}, CPUMeanCores: 0.2}},
		Tiers:       []results.TierUsage{{Tier: "store", Nodes: 1, CPUMeanCores: 0.2, CPUPerOpUs: 62}},
		EngineStats: []results.EngineStat{{Tier: "store", Name: "pg.xact_commit", First: 10, Last: 110, Max: 110}}}
	v = buildRunView(r, dir)
	if v.Saturation != r.Telemetry.Saturation || len(v.TeleTables) != 3 {
		t.Fatalf("saturation %q, %d tables", v.Saturation, len(v.TeleTables))
	}
	b, err := render(runTmpl, "run", v)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Which tier saturated", "CPU per node over time", "limit 0.2 cores", "Memory per node over time", "62.0 µs", "pg.xact_commit", "store node1"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestSaturationByPhase: a phases run's per-phase verdicts make a table of
// their own in the page, first among the telemetry tables, and a line
// each in the terminal summary.
func TestSaturationByPhase(t *testing.T) {
	r := &results.Run{Status: results.StatusOK, Telemetry: &results.Telemetry{HostCPUs: 2, Saturation: "app app1 saturated: at the host's 2 CPUs in 55%",
		Phases: []results.WindowSaturation{
			{Window: "10s@1/s", FromS: 0, ToS: 10, Samples: 10, HostCPUMean: 0.4, Saturation: "no tier saturated in this phase"},
			{Window: "10s@8/s", FromS: 10, ToS: 20, Samples: 10, HostCPUMean: 1.97, Saturation: "app app1 saturated: at the host's 2 CPUs in 100%",
				Saturated: &results.Saturated{Tier: "app", Node: "app1", Resource: "cpu", Share: 1}},
		}}}
	v := buildRunView(r, t.TempDir())
	if len(v.TeleTables) != 3 || v.TeleTables[0].Title != "Saturation by phase" || len(v.TeleTables[0].Rows) != 2 || v.TeleTables[0].Rows[1][0] != "10s@8/s" {
		t.Fatalf("tables %+v", v.TeleTables)
	}
	b, err := render(runTmpl, "run", v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Saturation by phase") || !strings.Contains(string(b), "app app1 saturated: at the host&#39;s 2 CPUs in 100%") {
		t.Error("the page lacks the per-phase verdicts")
	}
	var out strings.Builder
	Terminal(&out, r)
	if !strings.Contains(out.String(), "  phase 10s@8/s (10-20 s): app app1 saturated") || !strings.Contains(out.String(), "  phase 10s@1/s (0-10 s): no tier saturated") {
		t.Errorf("terminal:\n%s", out.String())
	}
}

// TestTelemetryNoSamples: a tier observed without a sample says "no
// samples" on the terminal and in the tiers' table, not zero cores.
func TestTelemetryNoSamples(t *testing.T) {
	r := &results.Run{Status: results.StatusOK, Telemetry: &results.Telemetry{HostCPUs: 2, Saturation: "not judged: no sample in the measured window",
		Tiers: []results.TierUsage{{Tier: "generator", Nodes: 1, CPUMeanCores: 0.1}}, NoSamples: []string{"store"}}}
	var b strings.Builder
	Terminal(&b, r)
	if out := b.String(); !strings.Contains(out, "cpu: generator 0.10 cores (0 µs/op), store no samples;") || strings.Contains(out, "store 0.00") {
		t.Errorf("terminal:\n%s", out)
	}
	found := false
	for _, ft := range telemetryTables(r.Telemetry) {
		for _, row := range ft.Rows {
			found = found || (row[0] == "store" && row[2] == "no samples")
		}
	}
	if !found {
		t.Errorf("no \"no samples\" row for the store in %+v", telemetryTables(r.Telemetry))
	}
}
