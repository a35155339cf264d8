package telemetry

import (
	"strings"
	"testing"
	"time"
)

// TestJudgeWindows: each phase is judged from the samples in it alone, in
// seconds since the load began (here 2 s after the sampler's start): a
// ramp whose last phase pins the app server at the host's CPUs names it
// there and nowhere else, and a phase with no sample is not judged.
func TestJudgeWindows(t *testing.T) {
	t0 := time.Now()
	app := &nodeState{Node: Node{Tier: "app", Name: "app1"}}
	s := &Sampler{cpus: 2, cfg: Config{Start: t0}, nodes: []*nodeState{app}, self: &nodeState{Node: Node{Tier: TierGenerator, Name: "scalelab"}}}
	for i := range 20 {
		mid := 2 + float64(i) + 0.5
		cores := 0.4
		if i >= 10 && i != 12 && i != 15 {
			cores = 1.9 // at 90% or more of the host's 2 CPUs
		}
		app.series = append(app.series, point{mid, cores})
		s.self.series = append(s.self.series, point{mid, 0.05})
		s.host.series = append(s.host.series, point{mid, cores + 0.05})
	}
	ws := s.JudgeWindows(t0.Add(2*time.Second), []Window{{"10s@1/s", 0, 10}, {"10s@2/s", 10, 20}, {"10s@4/s", 20, 30}})
	if len(ws) != 3 {
		t.Fatalf("%d windows", len(ws))
	}
	if w := ws[0]; w.Samples != 10 || w.Saturated != nil || w.Saturation != "no tier saturated in this phase" || w.HostCPUMean < 0.44 || w.HostCPUMean > 0.46 {
		t.Errorf("first phase: %+v", w)
	}
	if w := ws[1]; w.Samples != 10 || w.Saturated == nil || w.Saturated.Tier != "app" || w.Saturated.Node != "app1" || w.Saturated.Share != 0.8 ||
		!strings.Contains(w.Saturation, "app app1 saturated: at the host's 2 CPUs in 80% of the phase's seconds") || w.Window != "10s@2/s" || w.FromS != 10 || w.ToS != 20 {
		t.Errorf("second phase: %+v", w)
	}
	if w := ws[2]; w.Samples != 0 || w.Saturated != nil || !strings.HasPrefix(w.Saturation, "not judged") {
		t.Errorf("third phase: %+v", w)
	}
}

// TestWindowsKeepSamples: a sampler keeps the samples windows are judged
// from only when asked (Config.Windows), so that a long run that is no
// phases load does not grow its memory with its length.
func TestWindowsKeepSamples(t *testing.T) {
	for _, keep := range []bool{true, false} {
		start := time.Now()
		s, err := Start(Config{Dir: t.TempDir(), Start: start, Interval: 100 * time.Millisecond, Windows: keep})
		if err != nil {
			t.Fatal(err)
		}
		s.Measure()
		time.Sleep(time.Second)
		s.Stop()
		w := s.JudgeWindows(start, []Window{{"1m@1/s", 0, 60}})[0]
		if keep && (w.Samples < 2 || strings.HasPrefix(w.Saturation, "not judged")) {
			t.Errorf("kept: %+v", w)
		}
		if !keep && (w.Samples != 0 || len(s.self.series) != 0 || len(s.host.series) != 0) {
			t.Errorf("not kept: %+v", w)
		}
	}
}
