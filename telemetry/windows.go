package telemetry

import (
	"strings"
	"time"

	"github.com/scalelab/scalelab/results"
)

// Window is a stretch of the run judged on its own, such as one phase of
// the phases model.
type Window struct {
	Label    string  // what the stretch is ("30s@4/s")
	From, To float64 // seconds since the load began
}

// JudgeWindows (with Config.Windows set) judges each window as Summary judges the whole run, from
// the measured samples whose interval's middle falls in it: the node that
// spent half its samples or more at its CPU limit, else the host's CPUs,
// else none. Engine stats, taken every few seconds, stay with the whole
// run's verdict. A window with no measured sample (the warm-up) says so.
// loadStart is when the load began, which the windows count from.
func (s *Sampler) JudgeWindows(loadStart time.Time, ws []Window) []results.WindowSaturation {
	s.mu.Lock()
	defer s.mu.Unlock()
	off := loadStart.Sub(s.cfg.Start).Seconds()
	out := make([]results.WindowSaturation, 0, len(ws))
	for _, w := range ws {
		from, to := w.From+off, w.To+off
		t := results.Telemetry{HostCPUs: s.cpus}
		var hostSum float64
		var hostN int
		for _, p := range s.host.series {
			if p.mid >= from && p.mid < to {
				hostSum += p.cores
				hostN++
			}
		}
		if hostN > 0 {
			t.HostCPUMean = hostSum / float64(hostN)
		}
		for _, ns := range append(s.nodes, s.self) {
			limit := s.limitOf(ns)
			var n, at int
			var sum float64
			for _, p := range ns.series {
				if p.mid < from || p.mid >= to {
					continue
				}
				n++
				sum += p.cores
				if limit > 0 && p.cores >= atLimit*limit {
					at++
				}
			}
			t.Samples = max(t.Samples, n)
			if n == 0 {
				continue
			}
			t.Nodes = append(t.Nodes, results.NodeUsage{Tier: ns.Tier, Node: ns.Name, Role: ns.Role, Limits: ns.Limits,
				CPUMeanCores: sum / float64(n), AtLimitShare: float64(at) / float64(n)})
		}
		t.Samples = max(t.Samples, hostN)
		judge(&t)
		switch {
		case t.Samples == 0:
			t.Saturation = "not judged: no measured sample in this phase (the warm-up, or the run ended)"
		case t.Saturated == nil:
			t.Saturation = "no tier saturated in this phase"
		default:
			t.Saturation = strings.Replace(t.Saturation, "of the measured seconds", "of the phase's seconds", 1)
		}
		out = append(out, results.WindowSaturation{Window: w.Label, FromS: w.From, ToS: w.To, Samples: t.Samples,
			HostCPUMean: t.HostCPUMean, Saturation: t.Saturation, Saturated: t.Saturated})
	}
	return out
}
