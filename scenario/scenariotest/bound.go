package scenariotest

import (
	"testing"

	"github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/scenario"
)

// StoreBound checks that sc's workload, opened with assignments, holds
// its operations to the statements of an embedded SQLite store
// (scenario.Limited, in this process), and declares no bound behind a
// local cache, whose hits do not wait for the store, nor on the memory
// engine, whose operations take no connection.
func StoreBound(t *testing.T, sc scenario.Scenario, assignments ...string) {
	t.Helper()
	for _, tc := range []struct {
		engine, cache string
		bound         bool
	}{{sqlite.Name, "", true}, {sqlite.Name, "cache.mode=local", false}, {"memory", "", false}} {
		as := append([]string(nil), assignments...)
		if tc.cache != "" {
			as = append(as, tc.cache)
		}
		w := NewStore[scenario.Workload](t, sc, tc.engine, as...).Workload(t)
		l, ok := w.(scenario.Limited)
		if !ok {
			t.Fatalf("%s: the workload is not scenario.Limited", sc.Name())
		}
		n, inProcess := l.Inflight()
		if tc.bound && (n < 1 || !inProcess) || !tc.bound && (n != 0 || inProcess) {
			t.Errorf("%s on %s (%s): Inflight = %d, in process %v; want a bound %v", sc.Name(), tc.engine, tc.cache, n, inProcess, tc.bound)
		}
	}
}
