package metrics

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestInFlightIntegral: the mean in flight over a stretch is the time the
// operations spent in flight within it divided by its length, counting
// operations still running at its end, and the max is the most at once.
func TestInFlightIntegral(t *testing.T) {
	g := NewInFlight()
	g.Begin(0) // A: 0-10
	g.Begin(5) // B: 5-15
	g.End(10)
	mean, most := g.read(10) // A 10 + B 5 over 10
	if mean != 1.5 || most != 2 {
		t.Errorf("first stretch: mean %v max %d, want 1.5 and 2", mean, most)
	}
	g.End(15)
	mean, most = g.read(20) // B 5 over 10; B was in flight when it began
	if mean != 0.5 || most != 1 {
		t.Errorf("second stretch: mean %v max %d, want 0.5 and 1", mean, most)
	}
	mean, most = g.read(30)
	if mean != 0 || most != 0 || g.Now() != 0 {
		t.Errorf("idle stretch: mean %v max %d now %d, want zeros", mean, most, g.Now())
	}
}

// TestInFlightWraps: sums past 2^63 wrap without changing the figures.
func TestInFlightWraps(t *testing.T) {
	g := NewInFlight()
	g.startSum.Store(1<<63 - 5)
	g.endSum.Store(1<<63 - 5)
	g.lastArea = 0
	g.Begin(100)
	g.End(300)
	if mean, _ := g.read(400); mean != 0.5 {
		t.Errorf("mean %v after wrapping sums, want 0.5", mean)
	}
}

// TestCollectorInFlight: a collector with a gauge gives each interval its
// figures and sums the measured ones; concurrency.csv gets a row each.
func TestCollectorInFlight(t *testing.T) {
	dir := t.TempDir()
	sink, err := NewConcurrencySink(filepath.Join(dir, "concurrency.csv"))
	if err != nil {
		t.Fatal(err)
	}
	g := NewInFlight()
	c := NewCollector(Config{Ops: []string{"op"}, InFlight: g, Sinks: []Sink{sink}})
	c.Begin()
	g.Begin(0)
	c.Flush()
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	mean, most, ok := c.InFlightTotals()
	if !ok || most != 1 || mean <= 0.9 || mean > 1 {
		t.Errorf("one operation in flight all along: mean %v max %d ok %v", mean, most, ok)
	}
	data, err := os.ReadFile(filepath.Join(dir, "concurrency.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) != 2 || string(lines[0])+"\n" != ConcurrencyHeader() || !bytes.HasSuffix(lines[1], []byte(",1,0,false")) {
		t.Errorf("concurrency.csv:\n%s", data)
	}
	if _, _, ok := NewCollector(Config{Ops: []string{"op"}}).InFlightTotals(); ok {
		t.Error("a collector without a gauge reports in-flight figures")
	}
}

// BenchmarkInFlight is the cost of counting one operation in flight
// (Begin and End) with every processor doing so at once.
func BenchmarkInFlight(b *testing.B) {
	g := NewInFlight()
	b.RunParallel(func(pb *testing.PB) {
		var t int64
		for pb.Next() {
			t++
			g.Begin(t)
			g.End(t + 1)
		}
	})
}
