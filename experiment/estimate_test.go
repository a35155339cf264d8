package experiment

import (
	"strings"
	"testing"
	"time"
)

func TestEstimate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		repeats   int
		want      Estimate
		says      string
	}{
		{"fixed", `
scenario: ycsb
engine: memory
load: {users: 1, duration: 20s}
factors:
  users: [1, 2]
repeats: 3
`, 0, Estimate{Runs: 6, MaxRuns: 6, Load: 2 * time.Minute, MaxLoad: 2 * time.Minute, Combinations: 2}, "6 runs, about 2m0s of load, plus loading data"},
		{"--repeats and the default length", `
scenario: ycsb
engine: memory
factors:
  users: [1, 2, 4]
repeats: 3
`, 1, Estimate{Runs: 3, MaxRuns: 3, Load: 30 * time.Second, MaxLoad: 30 * time.Second, Combinations: 3}, "3 runs, about 30s of load"},
		{"adaptive, phases and ops", `
scenario: ycsb
engine: memory
factors:
  load:
    - {phases: "10s@1/s,20s@2/s"}
    - {ops: 5000}
repeats: {until_ci_within: 5%, min: 2, max: 6}
`, 0, Estimate{Runs: 4, MaxRuns: 12, Load: time.Minute, MaxLoad: 3 * time.Minute, ByOps: 6, Combinations: 2},
			"4 to 12 runs, about 1m0s to 3m0s of load (6 runs are bounded by operations: their time depends on the rate)"},
		{"knee: the search's repeats", `
scenario: ycsb
engine: memory
load: {users: 1, duration: 2s}
slo: p95 < 1s
search: {on: users, start: 1, max: 8, repeats: 1}
`, 0, Estimate{Runs: 1, MaxRuns: 1, Load: 2 * time.Second, MaxLoad: 2 * time.Second, Knee: true, Combinations: 1},
			"a knee search of 1 combination: 1 run per load step, about 2s of load per step"},
		{"knee: --repeats over the search's", `
scenario: ycsb
engine: memory
load: {users: 1, duration: 2s}
slo: p95 < 1s
search: {on: users, start: 1, max: 8, repeats: 1}
`, 2, Estimate{Runs: 2, MaxRuns: 2, Load: 4 * time.Second, MaxLoad: 4 * time.Second, Knee: true, Combinations: 1},
			"2 runs per load step"},
	} {
		s, err := Parse("t.yaml", []byte(tc.src), "")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		e, err := s.Estimate(tc.repeats)
		if err != nil || e != tc.want {
			t.Errorf("%s: Estimate = %+v, %v; want %+v", tc.name, e, err, tc.want)
		}
		if !strings.Contains(e.String(), tc.says) {
			t.Errorf("%s: %q lacks %q", tc.name, e.String(), tc.says)
		}
	}
}
