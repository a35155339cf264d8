package report

import (
	"strings"
	"testing"
)

// TestHTTPFigures: a web scenario's responses become a chart per status
// over time and a table per operation, and leave the generic tables.
func TestHTTPFigures(t *testing.T) {
	t.Parallel()
	rep := map[string]any{
		"app": map[string]any{"servers": 1},
		"http": map[string]any{
			"by_operation": map[string]any{"signup": map[string]any{"303": 10, "503": 2}, "home": map[string]any{"200": 12}},
			"per_second": []any{
				map[string]any{"t": 0, "codes": map[string]any{"200": 5, "303": 4}},
				map[string]any{"t": 1, "codes": map[string]any{"200": 7, "303": 6, "503": 2}},
			},
		},
	}
	tables, charts, rest := httpFigures(rep)
	if _, ok := rest["http"]; ok || rest["app"] == nil {
		t.Errorf("rest %v", rest)
	}
	if len(charts) != 1 || !strings.Contains(charts[0].Title, "per second by status") {
		t.Fatalf("charts %+v", charts)
	}
	if len(tables) != 1 || strings.Join(tables[0].Cols, " ") != "operation 200 303 503" {
		t.Fatalf("tables %+v", tables)
	}
	if got := strings.Join(tables[0].Rows[1], ","); got != "signup,,10,2" {
		t.Errorf("signup row %q", got)
	}
	if _, _, same := httpFigures(map[string]any{"x": 1}); same["x"] != 1 {
		t.Error("a report without http changed")
	}
}
