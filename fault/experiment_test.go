package fault_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/clustertest"
	"github.com/scalelab/scalelab/experiment"
	"github.com/scalelab/scalelab/results/resultstest"
)

func init() { cluster.Register(clustertest.SleepProvisioner{}) }

// TestFaultFactor: fault is an experiment factor; each level's runs get
// its faults, "none" gets none, and bad levels are errors with a position.
func TestFaultFactor(t *testing.T) {
	src := `
scenario: ycsb
engine: memory
settings: {ycsb.records: 100, memory.latency: 1ms}
load: {users: 2, duration: 3s}
clusters:
  memory: {nodes: 3}
factors:
  fault: [none, "kill:node2@1s", "stop:node1@1s+1s,kill:node3@2s"]
repeats: 1
`
	s, err := experiment.Parse("faults.yaml", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "xp")
	var stdout, stderr bytes.Buffer
	r, err := experiment.Run(context.Background(), s, experiment.Options{Out: out, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("experiment: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	want := [][]string{nil, {"kill:node2@1s"}, {"stop:node1@1s+1s", "kill:node3@2s"}}
	if len(r.Combinations) != len(want) {
		t.Fatalf("%d combinations", len(r.Combinations))
	}
	for i, c := range r.Combinations {
		run := resultstest.Read(t, filepath.Join(out, c.Runs[0].Dir))
		var got []string
		for _, f := range run.Faults {
			if f.Outcome != "done" {
				t.Errorf("%s: fault %+v", c.Label, f)
			}
			got = append(got, f.Spec)
		}
		if strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("%s: faults %v, want %v", c.Label, got, want[i])
		}
		if (run.Recovery != nil) != (len(want[i]) > 0) {
			t.Errorf("%s: recovery %+v", c.Label, run.Recovery)
		}
	}

	for _, bad := range []struct{ level, says string }{
		{`"kill:node2"`, "no '@TIME'"},
		{`"kill:node2@1s+1s"`, "only for stop"},
	} {
		src := strings.Replace(src, `"kill:node2@1s"`, bad.level, 1)
		s, err := experiment.Parse("faults.yaml", []byte(src), "")
		if err == nil {
			err = s.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), bad.says) || !strings.Contains(err.Error(), "faults.yaml:") {
			t.Errorf("level %s: error %v, want one at a position saying %q", bad.level, err, bad.says)
		}
	}
	// Faults without a cluster: the experiment says so before running.
	noCluster := strings.Replace(src, "clusters:\n  memory: {nodes: 3}\n", "", 1)
	s, err = experiment.Parse("faults.yaml", []byte(noCluster), "")
	if err == nil {
		err = s.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "--cluster") {
		t.Errorf("faults without a cluster: %v", err)
	}
}
