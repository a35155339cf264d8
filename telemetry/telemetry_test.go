package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

func TestParseStat(t *testing.T) {
	line := "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 7 0 12345 1000000 300 18446744073709551615"
	ps, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if ps.ppid != 1 || ps.user != 280 || ps.sys != 70 || ps.selfUser != 250 || ps.selfSys != 50 || ps.threads != 7 || ps.rssPg != 300 {
		t.Fatalf("parsed %+v", ps)
	}
	if _, err := parseStat([]byte("12 (x) S 1")); err == nil {
		t.Fatal("a short line parsed")
	}
}

func TestParseIO(t *testing.T) {
	r, w := parseIO([]byte("rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n"))
	if r != 4096 || w != 20 { // read_bytes, and wchar rather than write_bytes
		t.Fatalf("read %d write %d", r, w)
	}
}

// TestSamplerBusyTree samples a process tree whose child spins: the node's
// mean CPU is the CPU time the tree really used in the measured window
// (read here from the spinning child's own /proc entry, so a machine busy
// with other work that leaves the child less than a core does not fail
// it), the file has a row per tick for the node, scalelab and the host, and
// an idle process beside it reads near zero.
func TestSamplerBusyTree(t *testing.T) {
	busy := exec.Command("sh", "-c", "sh -c 'while :; do :; done' & wait")
	idle := exec.Command("sleep", "30")
	for _, c := range []*exec.Cmd{busy, idle} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		c := c
		t.Cleanup(func() {
			_ = exec.Command("pkill", "-P", strconv.Itoa(c.Process.Pid)).Run()
			_ = c.Process.Kill()
			_ = c.Wait()
		})
	}
	dir := t.TempDir()
	start := time.Now()
	s, err := Start(Config{Dir: dir, Start: start, Interval: 200 * time.Millisecond, Nodes: []Node{
		{Tier: "store", Name: "busy", PID: busy.Process.Pid},
		{Tier: "store", Name: "idle", PID: idle.Process.Pid},
	}, Sources: []Source{{Tier: "store", Sampler: fakeStats{}}}, StatsInterval: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	spinner := waitChild(t, busy.Process.Pid)
	s.Measure()
	cpu0, t0 := procCPU(t, spinner), time.Now()
	time.Sleep(2 * time.Second)
	cpu1, t1 := procCPU(t, spinner), time.Now()
	s.Stop()
	used := (cpu1 - cpu0) / t1.Sub(t0).Seconds()
	tel := s.Summary(1000)
	if tel.Samples < 5 {
		t.Fatalf("%d samples in 2 s at 200 ms", tel.Samples)
	}
	byName := map[string]results.NodeUsage{}
	for _, n := range tel.Nodes {
		byName[n.Node] = n
	}
	if used < 0.05 {
		t.Fatalf("the spinning child used %.2f cores: the machine gave it too little to compare", used)
	}
	if b := byName["busy"]; math.Abs(b.CPUMeanCores-used) > 0.25*used+0.1 {
		t.Errorf("busy tree: mean %.2f cores, the child used %.2f", b.CPUMeanCores, used)
	}
	if i := byName["idle"]; i.CPUMeanCores > 0.05 {
		t.Errorf("idle process: mean %.2f cores", i.CPUMeanCores)
	}
	if g, ok := byName["scalelab"]; !ok || g.Tier != TierGenerator || g.PeakRSSBytes == 0 {
		t.Errorf("scalelab itself: %+v", g)
	}
	if len(tel.Tiers) != 2 || tel.Tiers[0].Tier != "store" || tel.Tiers[0].Nodes != 2 || tel.Tiers[0].CPUPerOpUs <= 0 {
		t.Errorf("tiers %+v", tel.Tiers)
	}
	if tel.Cost == nil || tel.Cost.PerSampleMs <= 0 {
		t.Errorf("cost %+v", tel.Cost)
	}
	rows := resultstest.ReadCSV(t, filepath.Join(dir, results.TelemetryFile))
	count := map[string]int{}
	for _, r := range rows[1:] {
		count[r[1]+"/"+r[2]]++
	}
	for _, k := range []string{"store/busy", "store/idle", "generator/scalelab", "host/cpu"} {
		if count[k] < 5 {
			t.Errorf("%d rows for %s in telemetry.csv", count[k], k)
		}
	}
	if strings.Join(rows[0], ",")+"\n" != Header {
		t.Errorf("header %q", rows[0])
	}
	// the engine stats: the counter's first and last sample, and the
	// failing source's error recorded
	var got *results.EngineStat
	for i := range tel.EngineStats {
		if tel.EngineStats[i].Name == "fake.count" {
			got = &tel.EngineStats[i]
		}
	}
	if got == nil || got.Last <= got.First {
		t.Errorf("engine stats %+v", tel.EngineStats)
	}
	b, _ := os.ReadFile(filepath.Join(dir, results.EngineStatsFile))
	if !strings.HasPrefix(string(b), StatsHeader) || strings.Count(string(b), "fake.count") < 3 {
		t.Errorf("engine_stats.csv:\n%s", b)
	}
}

// fakeStats counts its calls.
type fakeStats struct{}

var calls int

func (fakeStats) SampleStats(context.Context) (map[string]float64, error) {
	calls++
	return map[string]float64{"fake.count": float64(calls), "fake.gauge": 3}, nil
}

// failing always errs.
type failing struct{}

func (failing) SampleStats(context.Context) (map[string]float64, error) {
	return nil, errors.New("connection refused")
}

func TestStatsErrorsRecorded(t *testing.T) {
	s, err := Start(Config{Dir: t.TempDir(), Start: time.Now(), Interval: time.Hour, StatsInterval: time.Hour,
		Sources: []Source{{Tier: "store", Sampler: failing{}}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Measure()
	s.Stop()
	tel := s.Summary(0)
	if len(tel.EngineErrors) != 1 || !strings.Contains(tel.EngineErrors[0], "connection refused") || !strings.Contains(tel.EngineErrors[0], "2 of 2") {
		t.Fatalf("errors %q", tel.EngineErrors)
	}
}

// TestMarkRepeats: a phase whose verdict is the run's says so in a few
// words; one that differs keeps its own.
func TestMarkRepeats(t *testing.T) {
	host := &results.Saturated{Tier: TierOther, Node: "cpu", Resource: "host"}
	tel := results.Telemetry{Saturation: "no tier of the run at its limit, but ...", Saturated: host, Phases: []results.WindowSaturation{
		{Window: "5s@1/s", Saturation: "no tier saturated in this phase"},
		{Window: "5s@8/s", Saturation: "no tier of the run at its limit, but ...", Saturated: &results.Saturated{Tier: TierOther, Node: "cpu", Resource: "host"}, HostCPUMean: 1.98},
		{Window: "5s@9/s", Saturation: "store node1 saturated: ...", Saturated: &results.Saturated{Tier: "store", Node: "node1", Resource: "cpu", Share: 0.7}},
	}}
	MarkRepeats(&tel)
	want := []string{"no tier saturated in this phase", "as the whole run (host mean 1.98 cores)", "store node1 saturated: ..."}
	for i, p := range tel.Phases {
		if p.Saturation != want[i] {
			t.Errorf("phase %s: %q, want %q", p.Window, p.Saturation, want[i])
		}
	}
	blind := results.Telemetry{Saturation: "unknown: the app tier ...", Phases: []results.WindowSaturation{{Saturation: "unknown: the app tier ...; no observed tier at its limit in this phase"}}}
	MarkRepeats(&blind)
	if blind.Phases[0].Saturation != "unknown, as the whole run" {
		t.Errorf("unknown phase: %q", blind.Phases[0].Saturation)
	}
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name string
		tel  results.Telemetry
		want string
	}{
		{"capped node", results.Telemetry{HostCPUs: 2, Samples: 10, Nodes: []results.NodeUsage{
			{Tier: "store", Node: "node1", AtLimitShare: 0.1, CPUMeanCores: 0.3},
			{Tier: "store", Node: "node2", AtLimitShare: 0.9, CPUMeanCores: 0.19, Limits: &results.Limits{CPUs: 0.2}},
		}}, "store node2 saturated: at its CPU limit of 0.2 cores in 90%"},
		{"generator", results.Telemetry{HostCPUs: 2, Samples: 10, Nodes: []results.NodeUsage{
			{Tier: TierGenerator, Node: "scalelab", AtLimitShare: 0.8, CPUMeanCores: 1.9},
		}}, "the generator (scalelab itself) saturated"},
		{"embedded store", results.Telemetry{HostCPUs: 2, Samples: 10, Nodes: []results.NodeUsage{
			{Tier: TierGenerator, Node: "scalelab", Role: "generator with the embedded sqlite store", AtLimitShare: 0.8, CPUMeanCores: 1.9},
		}}, "the generator with the embedded sqlite store (scalelab itself) saturated"},
		{"rejections", results.Telemetry{HostCPUs: 2, Samples: 10, EngineStats: []results.EngineStat{
			{Tier: "store", Name: "os.node1.pool.write.rejected", First: 0, Last: 12},
		}}, "store tier saturated: os.node1.pool.write.rejected grew by 12"},
		{"queue", results.Telemetry{HostCPUs: 2, Samples: 10, EngineStats: []results.EngineStat{
			{Tier: "store", Name: "cass.127_0_0_1.mutationstage.pending", First: 0, Last: 3, Max: 250},
		}}, "store tier saturated: cass.127_0_0_1.mutationstage.pending reached 250 queued tasks"},
		{"host", results.Telemetry{HostCPUs: 2, Samples: 10, HostCPUMean: 1.95, Nodes: []results.NodeUsage{
			{Tier: TierGenerator, Node: "scalelab", Source: "proc", CPUMeanCores: 1.5}}},
			"no single node at its limit, but the host's 2 CPUs were busy (mean 1.95 cores): the run's tiers used 1.50 of them and other processes on this machine 0.45; the tiers share one machine, and it saturated"},
		{"others", results.Telemetry{HostCPUs: 2, Samples: 10, HostCPUMean: 2, Nodes: []results.NodeUsage{
			{Tier: TierGenerator, Node: "scalelab", Source: "proc", CPUMeanCores: 0.07}}},
			"no tier of the run at its limit, but the host's 2 CPUs were busy (mean 2.00 cores), mostly by other processes on this machine (1.93 cores; the run's tiers 0.07): the machine was the limit, not the run's tiers"},
		{"others with an observed local process", results.Telemetry{HostCPUs: 2, Samples: 10, HostCPUMean: 2, Nodes: []results.NodeUsage{
			{Tier: TierGenerator, Node: "scalelab", Source: "proc", CPUMeanCores: 0.2},
			{Tier: "app", Node: "127.0.0.1:8080/web", Source: "prometheus", OnThisHost: true, CPUMeanCores: 1.0}}},
			"the run's tiers used 1.20 of them and other processes on this machine 0.80"},
		{"unobserved", results.Telemetry{HostCPUs: 2, Samples: 10, HostCPUMean: 0.5, Unobserved: []results.Unobserved{{Tier: "app", At: "http://10.0.0.5:8080"}}},
			"unknown: the app tier at http://10.0.0.5:8080 is not observed; no observed tier was at its limit over the measured window"},
		{"two unobserved, busy host", results.Telemetry{HostCPUs: 2, Samples: 10, HostCPUMean: 1.9, Unobserved: []results.Unobserved{{Tier: "store", At: "db:5432"}, {Tier: "app", At: "http://web"}}},
			"unknown: the store tier at db:5432 and the app tier at http://web are not observed; the host's 2 CPUs were busy (mean 1.90 cores): the run's observed tiers on this machine used 0.00 of them, other processes 1.90"},
		{"observed by prometheus, another unobserved", results.Telemetry{HostCPUs: 2, Samples: 10, Unobserved: []results.Unobserved{{Tier: "cache", At: "redis:6379"}},
			Nodes: []results.NodeUsage{{Tier: "store", Node: "db1:9256/pg", Source: "prometheus", AtLimitShare: 0.8, CPUMeanCores: 0.19, Limits: &results.Limits{CPUs: 0.2}}}},
			"store db1:9256/pg saturated: at its CPU limit of 0.2 cores in 80% of the measured seconds (mean 0.19 cores) (from prometheus's figures); the cache tier at redis:6379 is not observed"},
		{"none", results.Telemetry{HostCPUs: 2, Samples: 10, HostCPUMean: 0.5}, "no tier saturated over the measured window: the pace came from the load itself, the client or the network, or a limit held only part of the run (see the CPU charts)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			judge(&c.tel, wholeRun)
			if !strings.Contains(c.tel.Saturation, c.want) {
				t.Fatalf("saturation %q, want %q", c.tel.Saturation, c.want)
			}
		})
	}
}

// waitChild returns the pid of the first child of pid, waiting for the
// shell to start it.
func waitChild(t *testing.T, pid int) int {
	t.Helper()
	path := fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			child, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatal(err)
			}
			return child
		}
	}
	t.Fatalf("process %d started no child", pid)
	return 0
}

// procCPU reads a process's own user+system CPU seconds (fields 14 and 15
// of /proc/PID/stat, after the command name).
func procCPU(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	user, err1 := strconv.ParseFloat(f[11], 64)
	sys, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("stat of %d: %s", pid, b)
	}
	return (user + sys) / 100
}
