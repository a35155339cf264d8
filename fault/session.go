package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/results"
)

// Config tunes a Session; zero values take the defaults.
type Config struct {
	// Poll is the watcher's polling period (default 500 ms).
	Poll time.Duration
	// Grace is a restart's wait between TERM and KILL (default 10 s).
	Grace time.Duration
	// MaxEvents bounds the recorded events (default 1000); later ones are
	// counted in a last event.
	MaxEvents int
	// Log, when set, receives every event and every change of a fault as
	// it happens, one JSON line each (results.FaultLogLine).
	Log io.Writer
}

// Session injects the faults of one run into a cluster and records node
// events and health changes. Start it at the start of the load; call
// EndLoad when the load ends, optionally WaitHealthy, then Close.
type Session struct {
	cfg    Config
	origin time.Time
	specs  []Spec

	mu       sync.Mutex // guards everything below and st.Nodes' PIDs
	st       *cluster.State
	faults   []results.Fault
	events   []results.Event
	dropped  int
	alive    map[string]bool
	health   cluster.Health
	healthOK bool // the last poll saw green with every live node a member
	lastHS   string
	lastF    float64 // latest injection or lift, seconds; <0 none yet
	healthyS float64 // end of the first healthy poll started after lastF; <0 none
	checkS   float64 // that poll's duration
	gateS    float64 // when the state last changed by a fault: polls must begin after it
	ended    bool

	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped map[int]bool // fault index -> node still SIGSTOPped
	polled  chan struct{}
}

// Start begins watching st and schedules specs relative to origin (the
// start of the load). st is copied: the session updates its copy's PIDs
// (and saves it) when it restarts a node.
func Start(st *cluster.State, specs []Spec, origin time.Time, cfg Config) *Session {
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.MaxEvents <= 0 {
		cfg.MaxEvents = 1000
	}
	cp := *st
	cp.Nodes = append([]cluster.Node(nil), st.Nodes...)
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{cfg: cfg, origin: origin, specs: specs, st: &cp, alive: map[string]bool{},
		lastF: -1, healthyS: -1, cancel: cancel, stopped: map[int]bool{}, polled: make(chan struct{}, 1)}
	for _, sp := range specs {
		f := results.Fault{Spec: sp.Text, Kind: string(sp.Kind), Node: sp.Target(), AtS: sp.At.Seconds(), Outcome: "not reached"}
		if sp.Kind.lasts() {
			f.ForS = sp.For.Seconds()
		}
		s.faults = append(s.faults, f)
		s.logFault(len(s.faults) - 1)
	}
	s.restoreNet(&cp)
	for _, n := range cp.Nodes {
		if cp.Net != nil && cp.Net.IsCut(n.Name) {
			// Left partitioned by a run that died before it could heal.
			err := cp.Net.Heal(n.Name)
			s.event(results.EventFault, n.Name, fmt.Sprintf("its link was down (partitioned) before the run; brought it up (error: %v)", err))
		}
		s.alive[n.Name] = true
		if stopped(n.PID) {
			// Left hung by a run that died before it could send SIGCONT.
			err := signal(n.PID, syscall.SIGCONT)
			s.event(results.EventFault, n.Name, fmt.Sprintf("process %d was stopped (SIGSTOP) before the run; sent SIGCONT (error: %v)", n.PID, err))
		}
	}
	s.wg.Add(1)
	go s.watch(ctx)
	for i := range specs {
		s.wg.Add(1)
		go s.schedule(ctx, i)
	}
	return s
}

// restoreNet undoes network faults a run that died left in place: group
// partitions joined, every link given its own settings again.
func (s *Session) restoreNet(st *cluster.State) {
	if st.Net == nil {
		return
	}
	var sep []string
	for _, n := range st.Nodes {
		if st.Net.Separated(n.Name) {
			sep = append(sep, n.Name)
		}
	}
	if len(sep) > 0 {
		err := st.Join(sep)
		s.event(results.EventFault, strings.Join(sep, ","), fmt.Sprintf("partitioned from other nodes before the run; joined them (error: %v)", err))
	}
	if st.Links != nil {
		if err := st.ApplyLinks(); err != nil {
			s.event(results.EventFault, "", fmt.Sprintf("restore the links' settings before the run: %v", err))
		}
	}
}

// now is the time since the origin in seconds.
func (s *Session) now() float64 { return time.Since(s.origin).Seconds() }

func ptr(v float64) *float64 { return &v }

// event records an event; s.mu must be held.
func (s *Session) event(kind, node, detail string) {
	if len(s.events) >= s.cfg.MaxEvents {
		s.dropped++
		return
	}
	e := results.Event{TS: s.now(), Kind: kind, Node: node, Detail: detail}
	s.events = append(s.events, e)
	s.log(results.FaultLogLine{Event: &e})
}

// log writes one line to the streamed log; s.mu must be held.
func (s *Session) log(l results.FaultLogLine) {
	if s.cfg.Log == nil {
		return
	}
	b, err := json.Marshal(l)
	if err == nil {
		_, _ = s.cfg.Log.Write(append(b, '\n'))
	}
}

// logFault streams fault i's current state; s.mu must be held.
func (s *Session) logFault(i int) {
	f := s.faults[i]
	s.log(results.FaultLogLine{Fault: &f, Index: i})
}

// node returns the index of a node in the state; s.mu must be held.
func (s *Session) node(name string) int {
	for i, n := range s.st.Nodes {
		if n.Name == name {
			return i
		}
	}
	return -1
}

// signal sends sig to a node's process group and to the process.
func signal(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return fmt.Errorf("no process id")
	}
	gerr := syscall.Kill(-pid, sig)
	perr := syscall.Kill(pid, sig)
	if gerr != nil && perr != nil {
		return fmt.Errorf("signal %v to pid %d: %w", sig, pid, perr)
	}
	return nil
}

// stopped reports whether pid is stopped by a signal (state T in
// /proc/PID/stat).
func stopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'T'
}

// schedule waits for fault i's time, then injects it.
func (s *Session) schedule(ctx context.Context, i int) {
	defer s.wg.Done()
	sp := s.specs[i]
	t := time.NewTimer(time.Until(s.origin.Add(sp.At)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	f := &s.faults[i]
	f.InjectedS = ptr(s.now())
	s.lastF, s.gateS = *f.InjectedS, s.now()
	s.healthyS = -1
	idx := s.node(sp.Node)
	pid := s.st.Nodes[idx].PID
	var err error
	switch sp.Kind {
	case Kill:
		err = signal(pid, syscall.SIGKILL)
		s.event(results.EventFault, sp.Node, fmt.Sprintf("%s: SIGKILL pid %d", sp.Text, pid))
	case Stop:
		err = signal(pid, syscall.SIGSTOP)
		if err == nil {
			s.stopped[i] = true
		}
		s.event(results.EventFault, sp.Node, fmt.Sprintf("%s: SIGSTOP pid %d for %s", sp.Text, pid, sp.For))
	case Partition:
		switch {
		case s.st.Net == nil:
			err = fmt.Errorf("cluster %s has no network of its own (--netns)", s.st.Name)
		case sp.A != nil:
			if err = s.st.Separate(sp.A, sp.B); err == nil {
				s.stopped[i] = true
			}
			s.event(results.EventFault, sp.Target(), fmt.Sprintf("%s: %s cut from %s for %s (each still reaches the load generator)", sp.Text, strings.Join(sp.A, ","), strings.Join(sp.B, ","), sp.For))
		default:
			if err = s.st.Net.Cut(sp.Node); err == nil {
				s.stopped[i] = true
			}
			s.event(results.EventFault, sp.Node, fmt.Sprintf("%s: link down for %s (partitioned from every other node and the load generator)", sp.Text, sp.For))
		}
	case Delay, Loss:
		l := s.st.Links.Of(sp.Node)
		what := fmt.Sprintf("delay %s each way", sp.Delay)
		if sp.Kind == Delay {
			l.Delay = sp.Delay
		} else {
			l.LossPct = sp.LossPct
			what = fmt.Sprintf("%g%% of packets lost each way", sp.LossPct)
		}
		if err = s.setLink(sp, l); err == nil {
			s.stopped[i] = true
		}
		s.event(results.EventFault, sp.Node, fmt.Sprintf("%s: %s on its link for %s", sp.Text, what, sp.For))
	case Restart:
		sig := "TERM"
		if j := s.node(sp.Node); j >= 0 && s.st.Nodes[j].StopSignal != "" {
			sig = s.st.Nodes[j].StopSignal
		}
		s.event(results.EventFault, sp.Node, fmt.Sprintf("%s: %s pid %d (KILL after %s), then start again", sp.Text, sig, pid, s.cfg.Grace))
	}
	s.finish(f, err)
	s.logFault(i)
	s.mu.Unlock()
	switch sp.Kind {
	case Stop, Partition, Delay, Loss:
		if err != nil {
			return
		}
		t := time.NewTimer(sp.For)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		s.mu.Lock()
		s.resume(i)
		s.mu.Unlock()
	case Restart:
		s.restart(i, idx, pid)
	}
}

// finish sets a fault's outcome; s.mu must be held.
func (s *Session) finish(f *results.Fault, err error) {
	f.Outcome = "done"
	if err != nil {
		f.Outcome, f.Error = "failed", err.Error()
	}
}

// resume lifts a stop or network fault i if it is still in effect
// (SIGCONT, the link up again, the groups joined, the link's own delay and
// loss back); s.mu must be held.
func (s *Session) resume(i int) {
	if !s.stopped[i] {
		return
	}
	delete(s.stopped, i)
	sp := s.specs[i]
	pid := s.st.Nodes[s.node(sp.Node)].PID
	f := &s.faults[i]
	what := fmt.Sprintf("SIGCONT pid %d", pid)
	var err error
	switch sp.Kind {
	case Partition:
		what = "link up again (healed)"
		if sp.A != nil {
			what = "groups joined again (healed)"
			err = s.st.Join(append(append([]string{}, sp.A...), sp.B...))
		} else {
			err = s.st.Net.Heal(sp.Node)
		}
	case Delay, Loss:
		what = "link as before (" + s.st.Links.Of(sp.Node).String() + ")"
		err = s.setLink(sp, s.st.Links.Of(sp.Node))
	default:
		err = signal(pid, syscall.SIGCONT)
	}
	if err != nil {
		f.Outcome, f.Error = "failed", "end the fault: "+err.Error()
	}
	f.EndedS = ptr(s.now())
	s.lastF, s.gateS, s.healthyS = *f.EndedS, s.now(), -1
	s.event(results.EventFault, sp.Node, fmt.Sprintf("%s: %s", sp.Text, what))
	s.logFault(i)
}

// gone waits (up to 30 s) until pid no longer exists at all (not even as
// a zombie not yet reaped) and nothing listens on the node's ports: a
// server started too soon finds its old lock file's PID alive or its
// ports taken.
func gone(n cluster.Node, pid int) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		busy := syscall.Kill(pid, 0) == nil
		for _, p := range n.Ports {
			busy = busy || cluster.Listening(fmt.Sprintf("%s:%d", n.Host, p))
		}
		if !busy {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// setLink gives the node of a delay or loss fault the delay (its
// proxies) or the loss (its namespace's rules) of l.
func (s *Session) setLink(sp Spec, l cluster.Link) error {
	if sp.Kind == Delay {
		return s.st.SetDelay(sp.Node, l)
	}
	return s.st.Net.SetLoss(sp.Node, l.LossPct)
}

// startAgain starts a node with its recorded command, retrying (3 tries,
// 1 s apart) when the new process exits within 2 s (a server that found
// its predecessor's resources still held). It returns the PID and when
// the process that stayed up was started.
func startAgain(st *cluster.State, n cluster.Node, dir string) (int, time.Time, error) {
	var lastErr error
	for try := 0; try < 3; try++ {
		if try > 0 {
			time.Sleep(time.Second)
		}
		started := time.Now()
		pid, err := st.Restart(n, dir)
		if err != nil {
			return 0, started, err
		}
		deadline := time.Now().Add(2 * time.Second)
		for cluster.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if cluster.Alive(pid) {
			return pid, started, nil
		}
		lastErr = fmt.Errorf("the new process %d exited at once (see %s)", pid, n.LogFile)
	}
	return 0, time.Time{}, lastErr
}

// restart stops node idx (its stop signal, TERM by default; grace; KILL)
// and starts it again with its
// recorded command, saving the new PID in the cluster state.
func (s *Session) restart(i, idx, pid int) {
	s.mu.Lock()
	n := s.st.Nodes[idx]
	s.mu.Unlock()
	n.PID = pid
	err := cluster.StopNode(n, s.cfg.Grace)
	if err == nil {
		gone(n, pid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.faults[i]
	if err == nil && s.alive[n.Name] {
		// Seen here so that a quick restart between two polls is not missed.
		s.event(results.EventNodeDown, n.Name, fmt.Sprintf("process %d gone (stopped for the restart)", pid))
		s.alive[n.Name] = false
	}
	if err == nil && len(n.Cmd) == 0 {
		err = fmt.Errorf("node %s has no recorded command to start it again (a cluster from an older scalelab?)", n.Name)
	}
	if err == nil {
		dir := n.DataDir
		if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
			dir = s.st.Dir
		}
		s.mu.Unlock()
		newPID, started, serr := startAgain(s.st, n, dir)
		s.mu.Lock()
		if err = serr; err == nil {
			s.st.Nodes[idx].PID = newPID
			if serr := s.st.Save(); serr != nil {
				s.event(results.EventFault, n.Name, "cluster state not saved: "+serr.Error())
			}
			f.EndedS = ptr(started.Sub(s.origin).Seconds())
			s.lastF, s.gateS, s.healthyS = *f.EndedS, s.now(), -1
			s.event(results.EventFault, n.Name, fmt.Sprintf("%s: started again, pid %d", f.Spec, newPID))
			s.event(results.EventNodeUp, n.Name, fmt.Sprintf("process %d running", newPID))
			s.alive[n.Name] = true
		}
	}
	if err != nil {
		f.Outcome, f.Error = "failed", fmt.Sprintf("restart %s: %v", n.Name, err)
		s.event(results.EventFault, n.Name, f.Error)
	}
	s.logFault(i)
}

// snapshot copies the cluster state for a health probe; s.mu must be held.
func (s *Session) snapshot() *cluster.State {
	cp := *s.st
	cp.Nodes = append([]cluster.Node(nil), s.st.Nodes...)
	return &cp
}

// watch polls the nodes' processes every Poll and, in its own loop so that
// a slow engine probe never delays a node event, the cluster's health.
func (s *Session) watch(ctx context.Context) {
	defer s.wg.Done()
	s.wg.Add(1)
	go s.watchHealth(ctx)
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		s.pollProcs()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pollProcs records nodes whose process died or runs again.
func (s *Session) pollProcs() {
	s.mu.Lock()
	st := s.snapshot()
	s.mu.Unlock()
	alive := make([]bool, len(st.Nodes))
	for i, n := range st.Nodes {
		alive[i] = cluster.Alive(n.PID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range st.Nodes {
		if s.st.Nodes[i].PID != n.PID {
			continue // restarted meanwhile: the next poll sees the new process
		}
		if alive[i] != s.alive[n.Name] {
			if alive[i] {
				s.event(results.EventNodeUp, n.Name, fmt.Sprintf("process %d running", n.PID))
			} else {
				s.event(results.EventNodeDown, n.Name, fmt.Sprintf("process %d gone", n.PID))
			}
			s.alive[n.Name] = alive[i]
		}
	}
}

// watchHealth asks the engine for the cluster's health, at most every
// Poll.
func (s *Session) watchHealth(ctx context.Context) {
	defer s.wg.Done()
	for {
		next := time.After(s.cfg.Poll)
		s.pollHealth(ctx)
		select {
		case s.polled <- struct{}{}:
		default:
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
		}
	}
}

// pollHealth takes one look at the cluster's health.
func (s *Session) pollHealth(ctx context.Context) {
	s.mu.Lock()
	st := s.snapshot()
	s.mu.Unlock()
	began := s.now()
	live := 0
	for _, n := range st.Nodes {
		if cluster.Alive(n.PID) {
			live++
		}
	}
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	h, err := cluster.CheckHealth(hctx, st)
	cancel()
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		h = cluster.Health{Status: cluster.Unreachable, Of: len(st.Nodes), Detail: map[string]string{"error": err.Error()}}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.health = h
	if hs := h.String(); hs != s.lastHS {
		s.event(results.EventHealth, "", hs)
		s.lastHS = hs
	}
	// Healthy: green with every running process a member (right after a
	// kill the engine may still count the dead node and say green).
	s.healthOK = h.Healthy() && h.Nodes == live
	if s.healthOK && s.lastF >= 0 && s.healthyS < 0 && began >= s.gateS {
		s.healthyS = s.now()
		s.checkS = s.healthyS - began
	}
}

// EndLoad cancels the faults not yet injected (outcome "not reached") and
// lifts every stop still in effect, so no node is left hung. The watcher
// goes on until Close.
func (s *Session) EndLoad() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	idx := slices.Sorted(maps.Keys(s.stopped))
	for _, i := range idx {
		s.resume(i)
	}
}

// Pending reports whether a restart is still in progress.
func (s *Session) pendingRestart() bool {
	for i, sp := range s.specs {
		f := s.faults[i]
		if sp.Kind == Restart && f.InjectedS != nil && f.EndedS == nil && f.Outcome == "done" {
			return true
		}
	}
	return false
}

// WaitHealthy waits, up to bound, until a poll that started after the last
// fault saw the cluster healthy (green, every running node a member),
// calling progress about every second with the time waited and the last
// health. It returns how long it waited and whether the cluster was
// healthy.
func (s *Session) WaitHealthy(ctx context.Context, bound time.Duration, progress func(waited time.Duration, h cluster.Health)) (time.Duration, bool) {
	start := time.Now()
	deadline := start.Add(bound)
	lastProgress := start
	for {
		s.mu.Lock()
		// A poll must have started after now: the state before the wait
		// may be stale.
		ok := s.healthOK && !s.pendingRestart() && len(s.stopped) == 0 && (s.lastF < 0 || s.healthyS >= 0)
		h := s.health
		s.mu.Unlock()
		if ok {
			return time.Since(start), true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Since(start), false
		}
		if progress != nil && time.Since(lastProgress) >= time.Second {
			progress(time.Since(start), h)
			lastProgress = time.Now()
		}
		select {
		case <-ctx.Done():
		case <-s.polled:
		case <-time.After(s.cfg.Poll):
		}
	}
}

// Close stops the watcher and the schedule (lifting any stop still in
// effect) and returns the faults, the events in time order and the
// recovery figures (waited is what WaitHealthy returned, timedOut whether
// it hit its bound).
func (s *Session) Close(waited time.Duration, timedOut bool) ([]results.Fault, []results.Event, *results.Recovery) {
	s.EndLoad()
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped > 0 {
		s.events = append(s.events, results.Event{TS: s.now(), Kind: results.EventHealth, Detail: fmt.Sprintf("%d more events not recorded", s.dropped)})
	}
	sort.SliceStable(s.events, func(i, j int) bool { return s.events[i].TS < s.events[j].TS })
	rec := &results.Recovery{Health: s.health.String(), WaitedS: waited.Seconds(), TimedOut: timedOut}
	if s.lastF >= 0 {
		rec.LastFaultS = ptr(s.lastF)
		if s.healthyS >= 0 {
			rec.HealthyS = ptr(s.healthyS)
			rec.TimeToHealthyS = ptr(s.healthyS - s.lastF)
			rec.CheckS = ptr(s.checkS)
		}
	}
	return s.faults, s.events, rec
}
