package runner

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLiveExportNull measures the live figures' cost per operation
// on the null engine at its ceiling (ycsb C, closed model, 4 users): each
// iteration runs 1 s without the exporter, then 1 s with --metrics-listen
// scraped ten times a second (ten times what a Prometheus scraping every
// second asks). It reports scalelab's own CPU per operation (run.json's
// process.cpu_per_op_us, which contention from other processes does not
// inflate as it does throughput) without and with the exporter, their
// difference in ns per operation, and that difference as a share of an
// operation's CPU at the ceiling, and the throughputs.
func BenchmarkLiveExportNull(b *testing.B) {
	rate := func(listen string) (float64, float64) {
		o := &Options{Scenario: "ycsb", Engine: "null", Users: 4, Duration: time.Second, Out: filepath.Join(b.TempDir(), "r"),
			Sets: []string{"ycsb.workload=c"}, Arrivals: "constant", Drain: time.Second, Seed: 1, Telemetry: -1, NoAudit: true,
			Given: map[string]bool{"users": true}, MetricsListen: listen}
		p, err := NewPlan(o)
		if err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		if listen != "" {
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
						if resp, err := http.Get("http://" + listen + "/metrics"); err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
				}
			}()
		}
		doc, err := p.Execute(context.Background(), nil, io.Discard, io.Discard)
		close(stop)
		if err != nil {
			b.Fatal(err)
		}
		return float64(doc.Totals.Count) / doc.MeasuredS, doc.Process.CPUPerOpUs * 1e3
	}
	var off, on, cpuOff, cpuOn float64
	for range b.N {
		r, c := rate("")
		off, cpuOff = off+r, cpuOff+c
		r, c = rate(freeLoopback(b))
		on, cpuOn = on+r, cpuOn+c
	}
	n := float64(b.N)
	b.ReportMetric(off/n, "ops/s-without")
	b.ReportMetric(on/n, "ops/s-with")
	b.ReportMetric(cpuOff/n, "cpu-ns/op-without")
	b.ReportMetric(cpuOn/n, "cpu-ns/op-with")
	b.ReportMetric((cpuOn-cpuOff)/n, "cpu-ns/op-exporter")
	b.ReportMetric(100*(cpuOn-cpuOff)/cpuOff, "%-of-op")
}

// freeLoopback is a free loopback address.
func freeLoopback(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
