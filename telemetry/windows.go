package telemetry

import (
	"sort"
	"time"

	"github.com/scalelab/scalelab/results"
)

// Window is a stretch of the run judged on its own, such as one phase of
// the phases model.
type Window struct {
	Label    string  // what the stretch is ("30s@4/s")
	From, To float64 // seconds since the load began
}

// JudgeWindows judges each window as Summary judges the whole run, from
// the measured samples whose interval's middle falls in it (kept only
// with Config.Windows): the node that spent half its samples or more at
// its CPU limit, else the host's CPUs, else none. Engine stats, taken
// every few seconds, stay with the whole run's verdict. A window with no
// measured sample (the warm-up) says so. loadStart is when the load
// began, which the windows count from.
func (s *Sampler) JudgeWindows(loadStart time.Time, ws []Window) []results.WindowSaturation {
	s.mu.Lock()
	defer s.mu.Unlock()
	off := loadStart.Sub(s.cfg.Start).Seconds()
	out := make([]results.WindowSaturation, 0, len(ws))
	for _, w := range ws {
		from, to := w.From+off, w.To+off
		t := results.Telemetry{HostCPUs: s.cpus, Unobserved: s.blind}
		if host := within(s.host.series, from, to); len(host) > 0 {
			for _, p := range host {
				t.HostCPUMean += p.cores
			}
			t.HostCPUMean /= float64(len(host))
			t.Samples = len(host)
		}
		for _, ns := range append(s.nodes, s.self) {
			ps := within(ns.series, from, to)
			if len(ps) == 0 {
				continue
			}
			limit := s.limitOf(ns)
			var at int
			var sum float64
			for _, p := range ps {
				sum += p.cores
				if atLimitSample(p.cores, limit) {
					at++
				}
			}
			t.Samples = max(t.Samples, len(ps))
			src := "proc"
			if ns.external {
				src = ns.source
			}
			t.Nodes = append(t.Nodes, results.NodeUsage{Tier: ns.Tier, Node: ns.Name, Role: ns.Role, Limits: ns.Limits, Source: src, OnThisHost: ns.onHost,
				CPUMeanCores: sum / float64(len(ps)), AtLimitShare: float64(at) / float64(len(ps))})
		}
		judge(&t, phase)
		out = append(out, results.WindowSaturation{Window: w.Label, FromS: w.From, ToS: w.To, Samples: t.Samples,
			HostCPUMean: t.HostCPUMean, Saturation: t.Saturation, Saturated: t.Saturated})
	}
	return out
}

// within is the run of ps (in time order, as sampled) whose middles fall
// in [from, to).
func within(ps []point, from, to float64) []point {
	i := sort.Search(len(ps), func(i int) bool { return ps[i].mid >= from })
	j := sort.Search(len(ps), func(j int) bool { return ps[j].mid >= to })
	return ps[i:j]
}
