package liveexport

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestGrafanaDashboard loads the Grafana dashboard of the repository as
// JSON and checks that it has a panel for each series a run exports and
// for the tiers' CPU, each query naming a Prometheus data source.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("../examples/grafana/scalelab-run.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard is not valid JSON: %v", err)
	}
	for _, series := range []string{"scalelab_operations_total", "scalelab_errors_total", "scalelab_latency_seconds_bucket",
		"scalelab_latency_quantile_seconds", "scalelab_sessions", "scalelab_schedule_lag_seconds", "scalelab_audit_writes_total",
		"node_cpu_seconds_total", "process_cpu_seconds_total", "namedprocess_namegroup_cpu_seconds_total"} {
		found := ""
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				if strings.Contains(tg.Expr, series+"{") {
					found = p.Title
				}
			}
		}
		if found == "" {
			t.Errorf("no panel queries %s", series)
		}
	}
	for _, p := range d.Panels {
		if p.Title == "" || p.Type == "" || len(p.Targets) == 0 {
			t.Errorf("panel %+v lacks a title, a type or a query", p)
		}
	}
}
