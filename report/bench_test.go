package report

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// oneHourDir writes a synthetic one-hour run of an open model: 3600
// one-second intervals of 6 operations, each with latency, service-time
// and error histograms (64,800 interval-log lines, 21,600 series rows).
func oneHourDir(b *testing.B) string {
	dir := b.TempDir()
	synth{intervals: 3600, ops: []string{"activity.post", "totals.get", "achievements.get", "plan.get", "plan.tailor", "education.get"},
		perOp: 400, errEvery: 97, open: true, warmup: 10}.write(b, dir)
	return dir
}

// BenchmarkReportOneHour times report.html for a one-hour run, built from
// the interval log and series.csv (raw samples are never read). The
// target is under 5 s per report.
func BenchmarkReportOneHour(b *testing.B) {
	dir := oneHourDir(b)
	r := resultstest.Read(b, dir)
	b.ResetTimer()
	cpu0 := cpuSeconds()
	n := 0
	for b.Loop() {
		if err := WriteHTML(filepath.Join(dir, results.ReportFile), r, dir); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric((cpuSeconds()-cpu0)/float64(n), "cpu-s/op")
}

// cpuSeconds is the process's user and system CPU time: on a loaded
// machine it tells the work done apart from the wait for a processor.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// BenchmarkReadIntervalLogOneHour times the interval log alone.
func BenchmarkReadIntervalLogOneHour(b *testing.B) {
	dir := oneHourDir(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := metrics.ReadIntervalLog(filepath.Join(dir, results.HlogFile), 10); err != nil {
			b.Fatal(err)
		}
	}
}
