package runner

import (
	"fmt"
	"time"

	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// Thresholds of lagWarning: a process using this share of the cores it
// may use, or a host this busy, is short of CPU.
const (
	procShortOfCPU = 0.85
	hostShortOfCPU = 0.90
	// A rate model needing this share of its workers in flight on
	// average has none to spare for the bursts.
	workersShort = 0.8
)

// workers says how many operations a rate model needed in flight at once
// (its rate times the mean service time) and how many workers it has; 0
// and 0 for the other models, whose sessions are not capped.
type workers struct {
	needed float64
	have   int
}

// workersNeeded returns the rate model's workers figures from the run's
// summaries.
func workersNeeded(m load.Model, sums []metrics.OpSummary) workers {
	rm, ok := m.(*load.Rate)
	if !ok {
		return workers{}
	}
	var n int64
	var svc float64
	for _, s := range sums {
		if s.ServiceMeanMs != nil {
			n += s.Count
			svc += *s.ServiceMeanMs * float64(s.Count)
		}
	}
	if n == 0 {
		return workers{have: rm.Workers}
	}
	return workers{needed: rm.Rate * svc / float64(n) / 1e3, have: rm.Workers}
}

// lagWarning words the warning of an open-model run in which frac of the
// operations started late, with its cause: the generator's process short
// of CPU (its CPU time near the procs cores it may use), the host short
// of CPU (other processes took the cores; from telemetry), a rate model
// short of workers (its rate times the service time needs more
// operations in flight than --users), or, with CPU to spare, the
// generator short of wake-up capacity (its sessions were not woken on
// time).
func lagWarning(frac float64, proc *results.Process, tele *results.Telemetry, procs int, w workers) string {
	head := fmt.Sprintf("%.1f%% of operations started more than %s after their intended start (latencies include this wait): the generator could not keep up with the schedule", 100*frac, time.Duration(metrics.LateThresholdNs))
	if proc == nil || proc.WallS <= 0 || procs <= 0 {
		return head + " (more --users, or a lower rate)"
	}
	used := (proc.CPUUserS + proc.CPUSysS) / proc.WallS
	if used >= procShortOfCPU*float64(procs) {
		return head + fmt.Sprintf(", short of CPU: scalelab used %.2f of the %d cores it may use (a lower rate, or the load split over machines with --segment)", used, procs)
	}
	if tele != nil && tele.HostCPUs > 0 && tele.HostCPUMean >= hostShortOfCPU*float64(tele.HostCPUs) {
		return head + fmt.Sprintf(", short of CPU: the host's cores were busy (%.2f of %d on average) and scalelab got %.2f of them; other processes took the rest", tele.HostCPUMean, tele.HostCPUs, used)
	}
	if w.have > 0 && w.needed >= workersShort*float64(w.have) {
		return head + fmt.Sprintf(", short of workers: the rate times the mean service time needs %.1f operations in flight at once, and --users allows %d (raise --users)", w.needed, w.have)
	}
	return head + fmt.Sprintf(", short of wake-up capacity, not of CPU: scalelab used %.2f of the %d cores it may use, yet did not start its sessions' operations on time", used, procs)
}
