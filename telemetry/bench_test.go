package telemetry

import (
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkSample6Nodes is one sampling tick over 6 nodes, each a process
// tree of 4 processes, beside every other process of the machine: its time
// per tick is the CPU the sampler costs per second at the default 1 s
// interval (reported as %core@1s).
func BenchmarkSample6Nodes(b *testing.B) {
	var nodes []Node
	for i := range 6 {
		c := exec.Command("sh", "-c", "sleep 300 & sleep 300 & sleep 300 & wait")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = exec.Command("pkill", "-P", fmt.Sprint(c.Process.Pid)).Run()
			_ = c.Process.Kill()
			_ = c.Wait()
		})
		nodes = append(nodes, Node{Tier: "store", Name: fmt.Sprintf("node%d", i+1), PID: c.Process.Pid})
	}
	time.Sleep(100 * time.Millisecond)
	s, err := Start(Config{Dir: b.TempDir(), Start: time.Now(), Interval: time.Hour, Nodes: nodes})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	s.Measure()
	b.ResetTimer()
	for b.Loop() {
		s.sample(time.Now())
	}
	b.StopTimer()
	perTick := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(100*perTick, "%core@1s")
}
