package runner

import (
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
)

// TestLagWarningCause: the late-operations warning names the cause the
// figures show: the process at its cores, the host busy with other
// processes, or neither (wake-ups).
func TestLagWarningCause(t *testing.T) {
	t.Parallel()
	proc := func(cores float64) *results.Process {
		return &results.Process{CPUUserS: cores * 10 * 0.7, CPUSysS: cores * 10 * 0.3, WallS: 10}
	}
	host := func(mean float64) *results.Telemetry { return &results.Telemetry{HostCPUs: 2, HostCPUMean: mean} }
	for _, c := range []struct {
		name string
		proc *results.Process
		tele *results.Telemetry
		w    workers
		want []string
	}{
		{"process at its cores", proc(1.9), host(1.95), workers{}, []string{"short of CPU", "scalelab used 1.90 of the 2 cores"}},
		{"host busy with others", proc(0.4), host(1.9), workers{}, []string{"short of CPU", "the host's cores were busy (1.90 of 2", "scalelab got 0.40"}},
		{"CPU to spare", proc(0.6), host(0.8), workers{needed: 3, have: 32}, []string{"short of wake-up capacity, not of CPU", "scalelab used 0.60 of the 2 cores"}},
		{"rate model out of workers", proc(0.3), host(0.5), workers{needed: 5, have: 1}, []string{"short of workers", "needs 5.0 operations in flight at once, and --users allows 1"}},
		{"no telemetry, CPU to spare", proc(0.6), nil, workers{}, []string{"short of wake-up capacity"}},
		{"no process figures", nil, nil, workers{}, []string{"(more --users, or a lower rate)"}},
	} {
		got := lagWarning(0.032, c.proc, c.tele, 2, c.w)
		if !strings.HasPrefix(got, "3.2% of operations started more than 10ms after their intended start") || !strings.Contains(got, "could not keep up") {
			t.Errorf("%s: %q does not say how many started late", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not say %q", c.name, got, w)
			}
		}
	}
}
