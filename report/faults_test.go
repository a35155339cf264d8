package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
)

func fp(v float64) *float64 { return &v }

// faultRun is a synthetic run of 20 s with a kill at 5 s, a stop from 8 to
// 11 s, and the cluster healthy again at 14 s.
func faultRun(t *testing.T) (*results.Run, string) {
	dir := t.TempDir()
	r, _ := synth{intervals: 20, ops: []string{"read", "update"}, perOp: 200, errEvery: 50, status: results.StatusOK}.write(t, dir)
	r.Faults = []results.Fault{
		{Spec: "kill:node2@5s", Kind: "kill", Node: "node2", AtS: 5, InjectedS: fp(5.01), Outcome: "done",
			Before: &results.ErrorWindow{FromS: 0, ToS: 5, OK: 1000, Errors: 0},
			After:  &results.ErrorWindow{FromS: 5, ToS: 15, OK: 1800, Errors: 42, ByClass: map[string]int64{"refused": 40, "timeout": 2}}},
		{Spec: "stop:node3@8s+3s", Kind: "stop", Node: "node3", AtS: 8, ForS: 3, InjectedS: fp(8), EndedS: fp(11), Outcome: "done"},
		{Spec: "restart:node1@30s", Kind: "restart", Node: "node1", AtS: 30, Outcome: "not reached"},
		{Spec: "delay:node1=200ms@15s+2s", Kind: "delay", Node: "node1", AtS: 15, ForS: 2, InjectedS: fp(15), EndedS: fp(17), Outcome: "done"},
	}
	r.Events = []results.Event{
		{TS: 0.2, Kind: results.EventHealth, Detail: "green, 3 of 3 nodes"},
		{TS: 5.01, Kind: results.EventFault, Node: "node2", Detail: "kill:node2@5s: SIGKILL pid 42"},
		{TS: 5.5, Kind: results.EventNodeDown, Node: "node2", Detail: "process 42 gone"},
		{TS: 6, Kind: results.EventHealth, Detail: "yellow, 2 of 3 nodes <b>"},
		{TS: 14, Kind: results.EventHealth, Detail: "green, 2 of 3 nodes"},
	}
	r.Recovery = &results.Recovery{LastFaultS: fp(11), HealthyS: fp(14), TimeToHealthyS: fp(3), Health: "green, 2 of 3 nodes", WaitedS: 0}
	return r, dir
}

func TestFaultMarksAndTables(t *testing.T) {
	t.Parallel()
	r, dir := faultRun(t)
	marks := faultMarks(r)
	want := []string{"kill node2", "stop node3", "cont node3", "healthy", "delay node1", "end delay node1"}
	if len(marks) != len(want) {
		t.Fatalf("marks %+v", marks)
	}
	for i, m := range marks {
		if m.Label != want[i] {
			t.Errorf("mark %d %q, want %q", i, m.Label, want[i])
		}
	}
	s := renderPage(t, r, dir)
	// 2 latency charts, throughput and errors: 4 time charts, 6 marks each.
	if n := strings.Count(s, `class="mark"`); n != 24 {
		t.Errorf("%d marker lines, want 24", n)
	}
	for _, w := range []string{">kill node2</text>", ">end delay node1</text>", ">cont node3</text>", ">healthy</text>", "<h3>Faults</h3>", "<h3>Cluster events</h3>",
		"1800 ok, 42 errors (refused 40, timeout 2)", "not reached", "healthy (green) 3.0 s after the last fault", "yellow, 2 of 3 nodes &lt;b&gt;"} {
		if !strings.Contains(s, w) {
			t.Errorf("report lacks %q", w)
		}
	}
	var b bytes.Buffer
	TerminalFaults(&b, r)
	for _, w := range []string{"fault kill:node2@5s: done at 5.0 s", "10 s after: 1800 ok, 42 errors (refused 40, timeout 2)", "fault restart:node1@30s: not reached", "node down node2", "healthy (green) 3.0 s"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("terminal lacks %q:\n%s", w, b.String())
		}
	}
}

// A run without faults shows none of it.
func TestNoFaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, _ := synth{intervals: 3, ops: []string{"read"}, perOp: 10, status: results.StatusOK}.write(t, dir)
	var b bytes.Buffer
	TerminalFaults(&b, r)
	if b.Len() != 0 {
		t.Errorf("terminal: %q", b.String())
	}
	v := buildRunView(r, dir)
	if v.Faults != nil || v.Events != nil {
		t.Errorf("faults %+v events %+v", v.Faults, v.Events)
	}
	for _, l := range v.Throughput.Lines {
		if l.Class == "mark" {
			t.Error("a marker on a run without faults")
		}
	}
}
