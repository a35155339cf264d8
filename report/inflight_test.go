package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
)

// TestInFlightChart: concurrency.csv is read by column name (a torn last
// line ignored) and drawn with the measured window's figures in its note;
// the terminal line says when a merged max is an upper bound.
func TestInFlightChart(t *testing.T) {
	t.Parallel()
	rows, err := parseInFlight([]byte("t_s,interval_s,in_flight_mean,in_flight_max,users,warmup\n1.000,1.000,0.500,2,3,false\n2.000,1.000,1.250,4,1,false\n3.0,1.0,9"))
	if err != nil || len(rows) != 2 || rows[1].Mean != 1.25 || rows[1].Max != 4 || rows[0].Users != 3 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if _, err := parseInFlight([]byte("t_s,users\n1,2\n")); err == nil {
		t.Error("a file without the in-flight columns was read")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.ConcurrencyFile), []byte("t_s,interval_s,in_flight_mean,in_flight_max,users,warmup\n1.000,1.000,0.500,2,3,false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &results.Run{Concurrency: &results.Concurrency{MeanInFlight: 0.5, MaxInFlight: 2, Users: 50}}
	c, note := inFlightChart(r, dir, 10)
	if c == nil || note != "" || c.Title != "Operations in flight over time" || !strings.Contains(c.Note, "mean 0.5, max 2 in flight, with 50 users") {
		t.Errorf("chart %+v, note %q", c, note)
	}
	if _, note := inFlightChart(r, t.TempDir(), 10); !strings.Contains(note, "concurrency.csv is missing") {
		t.Errorf("missing file: note %q", note)
	}
	if got := inFlightText(&results.Concurrency{MeanInFlight: 1.234, MaxInFlight: 4, Users: 200, MaxIsBound: true}); got != "mean 1.23, max at most 4 operations at once (200 users)" {
		t.Errorf("terminal line %q", got)
	}
}
