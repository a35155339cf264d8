package experiment

import (
	"strings"
	"testing"
	"time"
)

// TestThreadsLoadFields: ramp_up and loops are load fields and factors;
// they reach the run as --ramp-up and --loops (the threads model), and bad
// values are refused with what is allowed.
func TestThreadsLoadFields(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `
scenario: ycsb
engine: memory
load:
  model: threads
  ramp_up: 2s
factors:
  loops: [10, 100]
`)
	combos := mustMatrix(t, s, 2)
	o := s.RunOptions(combos[1], 1, "dir", ClusterNames{})
	if o.Model != "threads" || o.RampUp != 2*time.Second || o.Loops != 100 || !o.Given["ramp-up"] || !o.Given["loops"] {
		t.Errorf("run options: model %q ramp-up %s loops %d given %v", o.Model, o.RampUp, o.Loops, o.Given)
	}
	if cmd := strings.Join(o.Args, " "); !strings.Contains(cmd, "--model threads") || !strings.Contains(cmd, "--ramp-up 2s --loops 100") {
		t.Errorf("command %q", cmd)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
	for key, bad := range map[string]string{"loops": "-1", "ramp_up": "soon", "model": "thread"} {
		if err := CheckLoad(key, bad); err == nil || !strings.Contains(err.Error(), "allowed") {
			t.Errorf("%s=%s: %v", key, bad, err)
		}
	}
}
