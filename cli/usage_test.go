package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Mistakes users make on the run command line: each is exit 2 before
// anything is created, with a message that says what to type instead, and
// a "did you mean" only where a value is genuinely near an allowed one.
func TestRunUsageMistakes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args    []string
		wants   []string
		refuses []string
	}{
		{[]string{"run", "ycsb", "--set", "ycsb.workload", "b"}, []string{"--set takes KEY=VALUE: did you mean --set ycsb.workload=b?"}, []string{"one scenario expected"}},
		{[]string{"run", "--set", "ycsb.workload", "b", "ycsb"}, []string{"did you mean --set ycsb.workload=b?"}, nil},
		{[]string{"run", "ycsb", "--set=ycsb.workload", "b"}, []string{"did you mean --set ycsb.workload=b?"}, nil},
		{[]string{"run", "ycsb", "extra"}, []string{"one scenario expected"}, []string{"--set takes"}},
		{[]string{"run", "ycsb", "--set", "ycsb.workload=g"}, []string{`ycsb.workload="g"`, "allowed: a|b|c|d|e|f"}, []string{"did you mean"}},
		{[]string{"run", "ycsb", "--set", "ycsb.workload=B"}, []string{`did you mean "b"?`}, nil},
		{[]string{"run", "ycsb", "--progress", "bars"}, []string{`--progress "bars"`, `did you mean "bar"?`, "allowed: auto|bar|lines|off"}, nil},
		{[]string{"run", "ycsb", "--progress", "xyz"}, []string{"allowed: auto|bar|lines|off"}, []string{"did you mean"}},
		{[]string{"run", "ycsb", "--model", "clsoed"}, []string{`--model "clsoed"`, `did you mean "closed"?`}, nil},
		{[]string{"run", "ycsb", "--rate", "10/s", "--arrivals", "poison"}, []string{`--arrivals "poison"`, `did you mean "poisson"?`, "allowed: constant|poisson"}, nil},
		{[]string{"run", "ycsb", "--phases", "5s@1", "--duration", "1s"}, []string{"--duration 1s is shorter than the phases", "5s@1", "5s in all"}, nil},
	} {
		out := filepath.Join(dir, "never")
		code, _, stderr := run(t, context.Background(), append(tc.args, "--engine", "null", "--out", out)...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %s", tc.args, code, stderr)
		}
		for _, w := range tc.wants {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, w)
			}
		}
		for _, r := range tc.refuses {
			if strings.Contains(stderr, r) {
				t.Errorf("%v: stderr %q has %q", tc.args, stderr, r)
			}
		}
	}
}
