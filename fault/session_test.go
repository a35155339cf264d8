package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/results"
)

// sleepers starts n real processes (sleep) as the nodes of a cluster whose
// engine has no provisioner, so health falls back to process liveness.
func sleepers(t *testing.T, n int) *cluster.State {
	t.Helper()
	dir := t.TempDir()
	st := &cluster.State{Name: "faulttest", Engine: "none", Dir: dir}
	for i := 1; i <= n; i++ {
		cmd := []string{"sleep", "300"}
		name := fmt.Sprintf("node%d", i)
		log := filepath.Join(dir, name+".log")
		pid, err := cluster.Start(cmd, dir, log, nil)
		if err != nil {
			t.Fatal(err)
		}
		st.Nodes = append(st.Nodes, cluster.Node{Name: name, PID: pid, DataDir: dir, LogFile: log, Cmd: cmd})
	}
	t.Cleanup(func() {
		if err := cluster.StopAll(st, time.Second); err != nil {
			t.Error(err)
		}
	})
	return st
}

// procState is the state letter of /proc/PID/stat (R, S, T, ...).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "gone"
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return s[i+2 : i+3]
}

func mustParse(t *testing.T, texts ...string) []Spec {
	t.Helper()
	s, err := ParseList(texts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSessionKillStopRestart(t *testing.T) {
	st := sleepers(t, 3)
	oldPID := st.Nodes[2].PID
	specs := mustParse(t, "kill:node1@200ms", "stop:node2@300ms+1s", "restart:node3@400ms", "kill:node2@1h")
	origin := time.Now()
	var log bytes.Buffer
	s := Start(st, specs, origin, Config{Poll: 100 * time.Millisecond, Grace: 2 * time.Second, Log: &log})

	// node2 hangs from 0.3 s to 1.3 s.
	deadline := time.Now().Add(20 * time.Second)
	for procState(st.Nodes[1].PID) != "T" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := procState(st.Nodes[1].PID); got != "T" {
		t.Fatalf("node2 state %s during its stop, want T", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var progressed int
	waited, ok := s.WaitHealthy(ctx, 30*time.Second, func(time.Duration, cluster.Health) { progressed++ })
	faults, events, rec := s.Close(waited, !ok)
	if !ok {
		t.Fatalf("cluster not healthy after %s: %+v\nevents %+v", waited, rec, events)
	}
	if cluster.Alive(st.Nodes[0].PID) {
		t.Error("node1 alive after kill")
	}
	if got := procState(st.Nodes[1].PID); got == "T" || got == "gone" {
		t.Errorf("node2 state %s after its stop ended, want running", got)
	}
	if cluster.Alive(oldPID) {
		t.Error("node3's old process survived the restart")
	}
	for i, want := range []string{"done", "done", "done", "not reached"} {
		if faults[i].Outcome != want {
			t.Errorf("fault %s outcome %q (%s), want %q", faults[i].Spec, faults[i].Outcome, faults[i].Error, want)
		}
	}
	if faults[1].InjectedS == nil || faults[1].EndedS == nil || *faults[1].EndedS-*faults[1].InjectedS < 0.9 {
		t.Errorf("stop fault times %+v", faults[1])
	}
	// The restarted node's new PID is saved in the cluster state.
	saved, err := os.ReadFile(filepath.Join(st.Dir, "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(saved), fmt.Sprintf(`"pid": %d,`, oldPID)) {
		t.Errorf("cluster.json still holds node3's old pid %d", oldPID)
	}
	var newPID int
	for _, e := range events {
		if e.Node == "node3" && e.Kind == results.EventFault && strings.Contains(e.Detail, "started again, pid") {
			fmt.Sscanf(e.Detail[strings.LastIndex(e.Detail, " ")+1:], "%d", &newPID)
		}
	}
	if newPID == 0 || !cluster.Alive(newPID) {
		t.Fatalf("no running restarted node3 in events %+v", events)
	}
	st.Nodes[2].PID = newPID // for the cleanup
	kinds := map[string]int{}
	for _, e := range events {
		kinds[e.Kind+" "+e.Node]++
	}
	for _, want := range []string{"fault node1", "node_down node1", "fault node2", "node_down node3", "node_up node3", "health "} {
		if kinds[want] == 0 {
			t.Errorf("no %q event in %+v", want, events)
		}
	}
	if rec.LastFaultS == nil || rec.TimeToHealthyS == nil || *rec.TimeToHealthyS < 0 || !strings.HasPrefix(rec.Health, "green, 2 of 3") {
		t.Errorf("recovery %+v (health %s)", rec, rec.Health)
	}
	// The log streamed every event and the latest state of every fault.
	streamed, last := 0, map[int]results.Fault{}
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var l results.FaultLogLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if l.Event != nil {
			streamed++
		}
		if l.Fault != nil {
			last[l.Index] = *l.Fault
		}
	}
	if streamed != len(events) {
		t.Errorf("%d events streamed, %d recorded", streamed, len(events))
	}
	for i, f := range faults {
		if g := last[i]; g.Spec != f.Spec || g.Outcome != f.Outcome {
			t.Errorf("fault %d streamed as %+v, recorded as %+v", i, g, f)
		}
	}
}

// TestSessionEndLoadResumes: a stop still in effect when the load ends is
// lifted at once, and faults not reached are recorded as such.
func TestSessionEndLoadResumes(t *testing.T) {
	st := sleepers(t, 1)
	s := Start(st, mustParse(t, "stop:node1@0s+1h"), time.Now(), Config{Poll: 50 * time.Millisecond})
	deadline := time.Now().Add(20 * time.Second)
	for procState(st.Nodes[0].PID) != "T" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	s.EndLoad()
	if got := procState(st.Nodes[0].PID); got == "T" {
		t.Fatal("node1 still stopped after EndLoad")
	}
	faults, _, rec := s.Close(0, false)
	if faults[0].EndedS == nil || faults[0].Outcome != "done" || rec.LastFaultS == nil {
		t.Errorf("fault %+v recovery %+v", faults[0], rec)
	}
}

// TestStartResumesAStoppedNode: a node left stopped (by a run killed
// during a stop fault) is resumed when the next session starts.
func TestStartResumesAStoppedNode(t *testing.T) {
	st := sleepers(t, 1)
	if err := signal(st.Nodes[0].PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !stopped(st.Nodes[0].PID) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	s := Start(st, nil, time.Now(), Config{Poll: 50 * time.Millisecond})
	_, events, _ := s.Close(0, false)
	if stopped(st.Nodes[0].PID) {
		t.Fatal("node still stopped")
	}
	if len(events) == 0 || !strings.Contains(events[0].Detail, "sent SIGCONT") {
		t.Errorf("events %+v", events)
	}
}
