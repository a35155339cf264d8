package metrics

import (
	"github.com/scalelab/scalelab/internal/testenv"

	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// hdrJar finds HdrHistogram's Java jar: $HDRHISTOGRAM_JAR, or the copy
// Maven fetched into ~/.m2 (.ci/run fetches it).
func hdrJar() string {
	if j := os.Getenv("HDRHISTOGRAM_JAR"); j != "" {
		return j
	}
	home, _ := os.UserHomeDir()
	j := filepath.Join(home, ".m2/repository/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar")
	if _, err := os.Stat(j); err == nil {
		return j
	}
	return ""
}

// TestHlogReadByHdrHistogramTool checks that HdrHistogram's own
// HistogramLogProcessor (Java) reads intervals.hlog with the right count,
// mean and max, in milliseconds (its default unit ratio, as values are ns).
func TestHlogReadByHdrHistogramTool(t *testing.T) {
	jar := hdrJar()
	java, err := exec.LookPath("java")
	if jar == "" || err != nil {
		if testenv.InCI() {
			t.Fatalf("CI must provide java and the HdrHistogram jar (jar %q, java: %v)", jar, err)
		}
		t.Skip("java or the HdrHistogram jar is missing; run: mvn dependency:get -Dartifact=org.hdrhistogram:HdrHistogram:2.2.2")
	}
	path := filepath.Join(t.TempDir(), "intervals.hlog")
	sink, err := NewHlogSink(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c, r := begun(Config{Ops: []string{"read", "update"}, Open: true, Sinks: []Sink{sink}})
	// 3 intervals of reads at 1..1000 ms (mean 500.5 ms, max 1000 ms), and
	// updates that must not leak into the read tag.
	for iv := 0; iv < 3; iv++ {
		for ms := 1; ms <= 1000; ms++ {
			r.Record(0, OK, int64(ms)*1_000_000, 1000, 0)
		}
		r.Record(1, OK, 5*60*1_000_000_000, 1000, 0)
		c.Flush()
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(java, "-cp", jar, "org.HdrHistogram.HistogramLogProcessor", "-i", path, "-tag", "read").CombinedOutput()
	if err != nil {
		t.Fatalf("HistogramLogProcessor: %v\n%s", err, out)
	}
	num := func(re string) float64 {
		m := regexp.MustCompile(re).FindSubmatch(out)
		if m == nil {
			t.Fatalf("no %s in:\n%s", re, out)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	count, mean, maxv := num(`Total count\s*=\s*(\d+)`), num(`Mean\s*=\s*([\d.]+)`), num(`Max\s*=\s*([\d.]+)`)
	if count != 3000 || mean < 499 || mean > 502 || maxv < 999 || maxv > 1001 {
		t.Fatalf("tool read count %v mean %v max %v; want 3000, 500.5, 1000\n%s", count, mean, maxv, out)
	}
}
