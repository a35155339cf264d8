package study

import (
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
)

// busy and calm are a 2-core host's telemetry: busy at 1.9 cores on
// average (mostly other processes) while an app server sat at its limit
// of 0.25 cores, which the run's verdict names; calm at 1.1 cores.
func busyHost() *results.Telemetry {
	return &results.Telemetry{HostCPUs: 2, HostCPUMean: 1.9, OtherCPUMean: 1.2,
		Saturated: &results.Saturated{Tier: "app", Node: "app1", Resource: "cpu", Limit: 0.25},
		Nodes: []results.NodeUsage{
			{Tier: "app", Node: "app1", Limits: &results.Limits{CPUs: 0.25}},
			{Tier: "store", Node: "pg1", Limits: &results.Limits{CPUs: 0.25}},
			{Tier: "generator", Node: "scalelab"},
		}}
}

func calmHost() *results.Telemetry {
	return &results.Telemetry{HostCPUs: 2, HostCPUMean: 1.1,
		Nodes: []results.NodeUsage{
			{Tier: "app", Node: "app1", Limits: &results.Limits{CPUs: 0.25}},
			{Tier: "app", Node: "app2", Limits: &results.Limits{CPUs: 0.25}},
			{Tier: "store", Node: "pg1", Limits: &results.Limits{CPUs: 0.25}},
			{Tier: "generator", Node: "scalelab"},
		}}
}

func TestHostSaturated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		tel  *results.Telemetry
		want bool
	}{
		{"no telemetry", nil, false},
		{"calm", calmHost(), false},
		{"busy by the host's figures, a node's limit named", busyHost(), true},
		{"at the threshold", &results.Telemetry{HostCPUs: 2, HostCPUMean: 1.8}, true},
		{"just under", &results.Telemetry{HostCPUs: 2, HostCPUMean: 1.79}, false},
		{"the verdict names other processes", &results.Telemetry{HostCPUs: 2, HostCPUMean: 1.5, Saturated: &results.Saturated{Tier: "other", Node: "cpu", Resource: "host"}}, true},
		{"no host figures", &results.Telemetry{HostCPUMean: 5}, false},
	} {
		if got := HostSaturated(c.tel); got != c.want {
			t.Errorf("%s: HostSaturated = %t, want %t", c.name, got, c.want)
		}
	}
}

// TestHostRule: the verdict rule on synthetic results with the host's
// telemetry: which rows the host decided.
func TestHostRule(t *testing.T) {
	t.Parallel()
	one, two := []float64{100, 102, 98}, []float64{150, 152, 149}
	row := Finding{ID: "servers", Finding: "2 servers faster", Setup: "s", Source: "Table 9", About: "2 servers / 1", Expect: Higher, Large: true,
		Measure:   &Selector{Experiment: "e", Levels: map[string]string{"servers": "2"}, Op: "(all)", Metric: "throughput"},
		Reference: &Selector{Levels: map[string]string{"servers": "1"}}}
	topo := row
	topo.Topology = true
	for _, c := range []struct {
		name      string
		f         Finding
		one, two  *results.Telemetry
		verdict   string
		reasonHas string
	}{
		{"topology, calm host", topo, calmHost(), calmHost(), Agrees, "the study's direction, significant"},
		{"topology, the reference's host busy though a node's limit is the verdict", topo, busyHost(), calmHost(), NotReproducible,
			"the host's CPUs saturated in 3 of 3 runs of servers=1: the machine, not the topology, decided"},
		{"topology, both busy", topo, busyHost(), busyHost(), NotReproducible, "3 of 3 runs of servers=2 and 3 of 3 runs of servers=1"},
		{"lever, both busy: kept, said", row, busyHost(), busyHost(), Agrees, "saturated in 3 of 3 runs of servers=2 and 3 of 3 runs of servers=1 alike"},
		{"lever, one side busy", row, calmHost(), busyHost(), NotReproducible, "the host's state, not the lever, may have decided"},
		{"lever, no telemetry", row, nil, nil, Agrees, "the study's direction, significant"},
	} {
		p, err := Build(synthStudyTel(t, one, two, c.one, c.two, c.f))
		if err != nil {
			t.Fatal(err)
		}
		if o := p.Rows[0].Outcome; o.Verdict != c.verdict || !strings.Contains(o.Reason, c.reasonHas) {
			t.Errorf("%s: %s: %s; want %s with %q", c.name, o.Verdict, o.Reason, c.verdict, c.reasonHas)
		}
	}
}

// TestScaleAndLoad: the page states each tier's nodes and CPU shares and
// the host's load, from the runs' telemetry.
func TestScaleAndLoad(t *testing.T) {
	t.Parallel()
	one, two := []float64{100, 102}, []float64{150, 152}
	row := Finding{ID: "servers", Finding: "f", Setup: "s", Source: "Table 9", About: "2 servers / 1", Expect: Higher,
		Measure:   &Selector{Experiment: "e", Levels: map[string]string{"servers": "2"}, Op: "(all)", Metric: "throughput"},
		Reference: &Selector{Levels: map[string]string{"servers": "1"}}}
	p, err := Build(synthStudyTel(t, one, two, busyHost(), calmHost(), row))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Scale) != 1 || p.Scale[0] != "e: app 1 to 2 nodes at 0.25 cores each; generator 1 node with no CPU limit; store 1 node at 0.25 cores each" {
		t.Errorf("scale %q", p.Scale)
	}
	l := p.Load[0]
	if l.Runs != 4 || l.Saturated != 2 || l.OtherRuns != 2 || l.Min != 1.1 || l.Max != 1.9 || l.Mean != 1.5 || l.Other != 1.2 {
		t.Errorf("load %+v", l)
	}
	md := p.Markdown()
	for _, want := range []string{"- scale: e: app 1 to 2 nodes", "- host load: e: host CPU 1.50 of 2 cores on average over 4 runs (runs' means 1.10 to 1.90); saturated in 2 of 4 runs; other processes on the machine 1.20 cores"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
}

func TestParseLoadAvg(t *testing.T) {
	t.Parallel()
	got := parseLoadAvg("19.17 10.64 7.07 20/256 1094\n")
	if len(got) != 3 || got[0] != 19.17 || got[1] != 10.64 || got[2] != 7.07 {
		t.Errorf("parseLoadAvg = %v", got)
	}
	for _, bad := range []string{"", "1.0 2.0", "x 1 2 3/4 5"} {
		if got := parseLoadAvg(bad); got != nil {
			t.Errorf("parseLoadAvg(%q) = %v, want nil", bad, got)
		}
	}
	re := RunExperiment{LoadStart: []float64{9.5, 7, 5.25}, LoadEnd: []float64{19.17, 10.64, 7.07}}
	if s := loadAvgText(re); s != "load average (1, 5, 15 min) 9.5, 7, 5.25 at the start, 19.17, 10.64, 7.07 at the end" {
		t.Errorf("loadAvgText = %q", s)
	}
	if s := loadAvgText(RunExperiment{}); s != "" {
		t.Errorf("without load averages: %q", s)
	}
}
