package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster/cgroup"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestCPULimitSaturates starts a PostgreSQL node capped at 0.1 cores
// (--cpus 0.1, a cgroup), drives it with more than it can serve, and
// checks that the telemetry measured its CPU near 0.1 cores from its
// cgroup, that the saturation line names it, and that `cluster down`
// removes its cgroup.
func TestCPULimitSaturates(t *testing.T) {
	skipShort(t, "starts PostgreSQL")
	needPostgres(t)
	needCgroupLimits(t)
	t.Setenv("SCALELAB_HOME", t.TempDir())
	ctx := context.Background()
	st, _ := upLoadedCluster(t, "postgres", "pgcap", "--cpus", "0.1", "--memory", "512m")
	g, err := cgroup.Open(st.Nodes[0].Cgroup)
	if err != nil {
		t.Fatalf("node cgroup %q: %v", st.Nodes[0].Cgroup, err)
	}
	if l := g.Limits(); l.CPUs != 0.1 || l.MemoryBytes != 512<<20 {
		t.Errorf("limits in force %+v", l)
	}
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := run(t, ctx, "run", "ycsb", "--cluster", "pgcap", "--users", "8", "--duration", "4s", "--set", "ycsb.records=2000",
		"--telemetry", "500ms", "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("run: %d\n%s\n%s", code, out, errs)
	}
	r := resultstest.Read(t, dir)
	tel := r.Telemetry
	if tel == nil || len(tel.Nodes) < 2 {
		t.Fatalf("telemetry %+v", tel)
	}
	n := tel.Nodes[0]
	t.Logf("node1 under --cpus 0.1: mean %.3f cores, max %.3f, at its limit in %.0f%% of samples, throttled %.1f s; %s",
		n.CPUMeanCores, n.CPUMaxCores, 100*n.AtLimitShare, n.ThrottledS, tel.Saturation)
	if n.Tier != "store" || n.Node != "node1" || n.Source != "cgroup v1" && n.Source != "cgroup v2" || n.Limits == nil || n.Limits.CPUs != 0.1 {
		t.Errorf("node %+v", n)
	}
	if n.CPUMeanCores < 0.06 || n.CPUMaxCores > 0.14 {
		t.Errorf("capped node used %.3f cores on average, %.3f at most; want about 0.1", n.CPUMeanCores, n.CPUMaxCores)
	}
	if tel.Saturated == nil || tel.Saturated.Node != "node1" || !strings.HasPrefix(tel.Saturation, "store node1 saturated: at its CPU limit of 0.1 cores") {
		t.Errorf("saturation %q", tel.Saturation)
	}
	if !strings.Contains(out, "saturation: store node1 saturated") {
		t.Errorf("terminal summary without the saturation line:\n%s", out)
	}
	page, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if err != nil || !strings.Contains(string(page), "store node1 saturated") || !strings.Contains(string(page), "CPU per node over time") || !strings.Contains(string(page), "limit 0.1 cores") {
		t.Errorf("report without the saturation line or the CPU chart (%v)", err)
	}
	if code, _, errs := run(t, ctx, "cluster", "down", "pgcap"); code != 0 {
		t.Fatalf("cluster down: %s", errs)
	}
	if _, err := cgroup.Open(st.Nodes[0].Cgroup); err == nil {
		t.Errorf("cgroup %s left behind after cluster down", st.Nodes[0].Cgroup)
	}
}

// TestLimitFlagsRefused: bad limits are usage errors that say what is
// allowed, before anything starts.
func TestLimitFlagsRefused(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	for _, c := range [][]string{{"--cpus", "0"}, {"--memory", "1k"}, {"--cpuset", "99"}} {
		code, _, errs := run(t, context.Background(), append([]string{"cluster", "up", "postgres", "--name", "x"}, c...)...)
		if code != 2 || !strings.Contains(errs, "allowed") {
			t.Errorf("%v: exit %d, %s", c, code, errs)
		}
	}
	if code, _, errs := run(t, context.Background(), "run", "ycsb", "--engine", "null", "--telemetry", "5ms"); code != 2 || !strings.Contains(errs, "from 100ms to 1m") {
		t.Errorf("--telemetry 5ms: exit %d, %s", code, errs)
	}
	// off: no sampler, no file, no summary; on by default
	for _, c := range []struct {
		flag string
		on   bool
	}{{"off", false}, {"1s", true}} {
		dir := filepath.Join(t.TempDir(), c.flag)
		if code, _, errs := run(t, context.Background(), "run", "ycsb", "--engine", "null", "--duration", "1s", "--telemetry", c.flag, "--out", dir, "--progress", "off"); code != 0 {
			t.Fatalf("--telemetry %s: exit %d, %s", c.flag, code, errs)
		}
		_, err := os.Stat(filepath.Join(dir, results.TelemetryFile))
		if r := resultstest.Read(t, dir); (r.Telemetry != nil) != c.on || (err == nil) != c.on {
			t.Errorf("--telemetry %s: summary %v, telemetry.csv %v", c.flag, r.Telemetry != nil, err)
		}
	}
}
