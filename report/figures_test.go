package report

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestScenarioFigures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		rep        string
		tables     []string // titles
		charts     int
		wantInRows []string
	}{
		{"stale and fresh reads", `{"stale_reads":{"totals.get":3,"plan.get":0},"fresh_reads":{"totals.get":97,"plan.get":10},"verified":true,"note":"n"}`,
			[]string{"Figures", "fresh_reads, stale_reads"}, 1, []string{"3.00%", "0%", "true"}},
		{"freshness probes", `{"ground_truth":{"records_written":10},"freshness":{"probes":2,"note":"x","delay_ms":{"count":2,"p50":120.5,"p99":null},
			"polls":{"count":2,"p50":2,"p99":null},"each":[{"delay_ms":100,"polls":1},{"delay_ms":141,"polls":2}]}}`,
			[]string{"ground_truth", "freshness", "freshness.delay_ms, freshness.polls", "freshness.each"}, 1, []string{"120.5", "141", "-"}},
		{"empty", `{}`, nil, 0, nil},
		{"deep", `{"a":{"b":{"c":{"d":1}}}}`, []string{"a.b.c"}, 0, []string{"1"}},
	} {
		var rep map[string]any
		if err := json.Unmarshal([]byte(tc.rep), &rep); err != nil {
			t.Fatal(err)
		}
		tables, charts := scenarioFigures(rep)
		var titles []string
		var cells []string
		for _, tb := range tables {
			titles = append(titles, tb.Title)
			for _, r := range tb.Rows {
				cells = append(cells, r...)
			}
		}
		if strings.Join(titles, "|") != strings.Join(tc.tables, "|") || len(charts) != tc.charts {
			t.Errorf("%s: tables %q, %d charts; want %q, %d", tc.name, titles, len(charts), tc.tables, tc.charts)
		}
		for _, w := range tc.wantInRows {
			if !contains(cells, w) {
				t.Errorf("%s: no cell %q in %q", tc.name, w, cells)
			}
		}
	}
	// a live run's Go values are read like run.json's
	tables, charts := scenarioFigures(map[string]any{"stale_reads": map[string]int64{"a": 1}, "fresh_reads": map[string]int64{"a": 3}})
	if len(tables) != 1 || len(charts) != 1 || tables[0].Rows[0][3] != "25.00%" {
		t.Errorf("Go values: %+v", tables)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
