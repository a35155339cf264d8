package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
)

var (
	figureRE  = regexp.MustCompile(`(?s)<figure class="chart"><figcaption>(.*?)</figcaption>(.*?)</figure>`)
	pathDRE   = regexp.MustCompile(`<path d="([^"]*)"`)
	intervals = regexp.MustCompile(`(?m)^([0-9.]+),([0-9.]+),`)
)

// A real run ends with an interval the stop cuts to a few milliseconds;
// series.csv keeps it, and no chart over time of report.html draws it as
// a point of its own: each line has at most one point per whole interval.
func TestRunReportHasNoPointForTheLastShortInterval(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if code, out, errs := run(t, context.Background(), "run", "ycsb", "--engine", "null", "--duration", "2s", "--out", dir, "--progress", "off"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	ser, err := os.ReadFile(filepath.Join(dir, results.SeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	whole, short := map[string]bool{}, map[string]bool{}
	for _, m := range intervals.FindAllStringSubmatch(string(ser), -1) {
		if l, _ := strconv.ParseFloat(m[2], 64); l >= 0.1 {
			whole[m[1]] = true
		} else {
			short[m[1]] = true
		}
	}
	if len(short) == 0 {
		t.Logf("this run's series.csv has no short last interval:\n%s", ser)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range figureRE.FindAllStringSubmatch(string(page), -1) {
		title := f[1]
		if !strings.Contains(title, "over time") || strings.HasPrefix(title, "CPU") || strings.HasPrefix(title, "Memory") {
			continue // the telemetry charts follow their own samples
		}
		for _, d := range pathDRE.FindAllStringSubmatch(f[2], -1) {
			checked++
			if n := strings.Count(d[1], "M") + strings.Count(d[1], "L"); n > len(whole) {
				t.Errorf("%s: a line of %d points, more than the %d whole intervals (short ones at %v)", title, n, len(whole), short)
			}
		}
	}
	if checked == 0 {
		t.Fatalf("no line over time in report.html")
	}
}
