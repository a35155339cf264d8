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

// TestTimelineGapsAndShortIntervals: intervals in which nothing ran have
// no rows in series.csv; they chart as zero throughput (not a line drawn
// across them), and the short interval at the stop is folded into the one
// before it rather than charted as a huge rate.
func TestTimelineGapsAndShortIntervals(t *testing.T) {
	t.Parallel()
	s, err := parseSeries([]byte("t_s,interval_s,op,count,errors,throughput_per_s,p50_ms,p99_ms\n" +
		"1.000,1.000,a,100,0,100,1,,\n1.000,1.000,b,50,0,50,1,,\n" +
		"11.000,1.000,b,0,1,0,,,\n11.006,0.006,b,0,7,0,,,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if rows := s.Rows["b"]; len(rows) != 2 || rows[1].Errors != 8 || rows[1].IntervalS < 1.005 || rows[1].T != 11 {
		t.Fatalf("short interval not merged into the one before, at its end: %+v", rows)
	}
	tl := timeline(s.Rows, 1)
	if len(tl) != 4 || !tl[1].Empty || !tl[2].Empty || tl[1].T != 2 || tl[2].T != 10 {
		t.Fatalf("timeline %+v", tl)
	}
	_, y := align(s.Rows["a"], tl, func(r seriesRow) float64 { return rate(r.Count, r) }, 0)
	if y[0] != 100 || y[1] != 0 || y[2] != 0 || y[3] != 0 {
		t.Errorf("a's throughput %v, want 100 then zeros", y)
	}
	_, e := align(s.Rows["b"], tl, func(r seriesRow) float64 { return rate(r.Errors, r) }, 0)
	if e[3] > 8 {
		t.Errorf("b's errors/s at the stop %v: the short interval inflated the rate", e[3])
	}
}
