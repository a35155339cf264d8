package load

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

// nothingToLoad is the part of a test workload that loads nothing and
// holds nothing to release.
type nothingToLoad struct{}

func (nothingToLoad) LoadSize() int64                                { return 0 }
func (nothingToLoad) Load(context.Context, int, func(n int64)) error { return nil }
func (nothingToLoad) Close() error                                   { return nil }

// fakeWorkload is a one-operation workload whose Do sleeps for a set time,
// optionally stalling once, for testing the executors' logic.
type fakeWorkload struct {
	nothingToLoad
	service  time.Duration
	stallAt  int64 // the n-th operation (1-based) stalls
	stallFor time.Duration
	n        atomic.Int64
	ops      int // operations per session (0: endless)
	sessions atomic.Int64
}

func (w *fakeWorkload) Operations() []string { return []string{"op"} }
func (w *fakeWorkload) NewSession(id, seed uint64) scenario.Session {
	w.sessions.Add(1)
	return &fakeSession{w: w}
}

// opCount counts a test session's operations.
type opCount int

// next counts the next operation of a session of limit operations (0:
// endless), or reports false when the session has ended.
func (n *opCount) next(limit int) bool {
	if limit > 0 && int(*n) >= limit {
		return false
	}
	*n++
	return true
}

type fakeSession struct {
	w    *fakeWorkload
	done opCount
}

func (s *fakeSession) Next() (int, bool) { return 0, s.done.next(s.w.ops) }

func (s *fakeSession) Do(ctx context.Context) error {
	n := s.w.n.Add(1)
	d := s.w.service
	if n == s.w.stallAt {
		d = s.w.stallFor
	}
	if d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// runCollected runs m over wl into c as the runner does (the collector
// begun and running while the load executes, stopped after it), returning
// the run and whether workers were still busy after the drain.
func runCollected(t *testing.T, wl scenario.Workload, c *metrics.Collector, m Model, opt Options) (*Run, bool) {
	t.Helper()
	r, err := NewRun(wl, c, m, opt)
	if err != nil {
		t.Fatal(err)
	}
	c.Begin()
	stop := make(chan struct{})
	done := make(chan error)
	go func() { done <- c.Run(stop) }()
	stuck := r.Execute(context.Background())
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return r, stuck
}

func execute(t *testing.T, wl scenario.Workload, m Model, opt Options) (metrics.OpSummary, *Run, *metrics.Collector) {
	t.Helper()
	c := metrics.NewCollector(metrics.Config{Ops: wl.Operations(), Open: m.Open()})
	r, _ := runCollected(t, wl, c, m, opt)
	totals, _, measured := c.Totals()
	s := metrics.Summarize(totals, measured, c.InFlight())
	if len(s) != 1 {
		t.Fatalf("summaries: %+v", s)
	}
	return s[0], r, c
}

// TestClosedOpsBudgetIsExact: --ops is one budget shared by all users.
func TestClosedOpsBudgetIsExact(t *testing.T) {
	t.Parallel()
	for _, ops := range []int64{1, 7, 1000, 12345} {
		wl := &fakeWorkload{ops: 3}
		s, r, _ := execute(t, wl, &Closed{Users: 16}, Options{Ops: ops})
		if s.Count != ops || wl.n.Load() != ops || r.StopReason() != "completed" {
			t.Fatalf("ops %d: counted %d, executed %d, stop %q", ops, s.Count, wl.n.Load(), r.StopReason())
		}
	}
}

// TestClosedThinkTime: with 2 users thinking 50 ms, about 40 ops/s.
func TestClosedThinkTime(t *testing.T) {
	t.Parallel()
	s, _, _ := execute(t, &fakeWorkload{}, &Closed{Users: 2, Think: Think{kind: 'c', a: 50 * time.Millisecond}}, Options{Duration: time.Second})
	if s.Count < 20 || s.Count > 50 {
		t.Fatalf("count %d, want about 40", s.Count)
	}
}

// TestRateNoCoordinatedOmission: one stall of 300 ms at 200 ops/s on one
// worker delays about 60 scheduled operations; their latency counts from
// their intended start, so p99 reflects the stall while service time does
// not.
func TestRateNoCoordinatedOmission(t *testing.T) {
	t.Parallel()
	wl := &fakeWorkload{stallAt: 20, stallFor: 300 * time.Millisecond}
	s, _, _ := execute(t, wl, &Rate{Rate: 200, Arrivals: "constant", Workers: 1}, Options{Duration: 1500 * time.Millisecond})
	if s.Count < 250 || s.Count > 310 {
		t.Fatalf("count %d, want about 300", s.Count)
	}
	if s.P99Ms == nil || *s.P99Ms < 100 {
		t.Fatalf("p99 %v ms: the stall has to appear in latency from the intended start", s.P99Ms)
	}
	if s.Service == nil || s.ServiceP95Ms == nil || *s.ServiceP95Ms > 20 {
		t.Fatalf("service p95 %v: must not include the wait", s.Service)
	}
	if s.Late < 30 {
		t.Fatalf("late %d: operations after the stall must be counted late", s.Late)
	}
}

func TestRatePoissonThroughput(t *testing.T) {
	t.Parallel()
	s, _, _ := execute(t, &fakeWorkload{}, &Rate{Rate: 2000, Arrivals: "poisson", Workers: 4}, Options{Duration: time.Second})
	if s.Count < 1700 || s.Count > 2300 {
		t.Fatalf("count %d at 2000/s poisson for 1 s", s.Count)
	}
}

// TestRateScheduleEndsAtDuration: the duration counts from the
// collector's base, and no arrival scheduled at or after its end starts,
// however late the run begins or its stop timer fires: 1,000/s for 1 s
// begun 300 ms before Execute runs at most 1,000 operations, not 1,300.
func TestRateScheduleEndsAtDuration(t *testing.T) {
	t.Parallel()
	wl := &fakeWorkload{}
	m := &Rate{Rate: 1000, Arrivals: "constant", Workers: 2}
	c := metrics.NewCollector(metrics.Config{Ops: wl.Operations(), Open: m.Open()})
	r, err := NewRun(wl, c, m, Options{Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Begin()
	time.Sleep(300 * time.Millisecond)
	r.Execute(context.Background())
	if n := wl.n.Load(); n > 1000 || n < 900 {
		t.Fatalf("%d operations at 1000/s for 1 s, want at most 1000 (and about that many)", n)
	}
	if r.StopReason() != "duration" {
		t.Fatalf("stop reason %q, want duration", r.StopReason())
	}
}

// TestPhasesSessions: sessions arrive at the phase rate and are counted.
func TestPhasesSessions(t *testing.T) {
	t.Parallel()
	wl := &fakeWorkload{ops: 5}
	m := &Phases{Phases: []Phase{{Duration: 500 * time.Millisecond, Rate: 100}, {Duration: 500 * time.Millisecond, Rate: 200}}, Think: Think{kind: 'c', a: 20 * time.Millisecond}}
	// the run ends once the last session has ended: the generous bound
	// only keeps a starved machine from cutting the last sessions short
	s, _, c := execute(t, wl, m, Options{Duration: m.Total() + 20*time.Second})
	n := wl.sessions.Load()
	if n < 100 || n > 200 {
		t.Fatalf("%d sessions, want about 150", n)
	}
	if s.Count != 5*n || c.MaxSessions() < 2 {
		t.Fatalf("count %d for %d sessions of 5 ops; max sessions %d", s.Count, n, c.MaxSessions())
	}
}

// TestStopCountsInFlight: an operation stuck past the drain is counted
// as in flight, never dropped, and never as an error: the cancellation the
// drain gives it is not its outcome (closed, rate and phases alike).
func TestStopCountsInFlight(t *testing.T) {
	t.Parallel()
	for _, m := range []Model{&Closed{Users: 1}, &Rate{Rate: 1000, Arrivals: "constant", Workers: 4}, &Phases{Phases: []Phase{{Duration: 50 * time.Millisecond, Rate: 1000}}}} {
		wl := &fakeWorkload{stallAt: 1, stallFor: time.Hour, service: time.Millisecond}
		s, _, _ := execute(t, wl, m, Options{Duration: 100 * time.Millisecond, Drain: 100 * time.Millisecond})
		if s.Started == 0 || s.InFlight != 1 || s.Errors != 0 || s.Count+s.InFlight != s.Started {
			t.Errorf("%T: %+v", m, s)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, m := range []Model{&Closed{Users: 0}, &Rate{Rate: 0, Arrivals: "constant", Workers: 1}, &Rate{Rate: 10, Arrivals: "bursty", Workers: 1}, &Phases{}} {
		if err := m.Validate(); !errors.Is(err, ErrBadSpec) {
			t.Errorf("%s: Validate = %v, want ErrBadSpec", m.Name(), err)
		}
	}
}

func TestParseThink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "0s"}, {"0", "0s"}, {"2s", "2s"}, {"0-5s", "0s-5s"}, {"500ms-2s", "500ms-2s"}, {"exp:2s", "exp:2s"}, {"1s-1s", "1s"},
	} {
		th, err := ParseThink(tc.in)
		if err != nil || th.String() != tc.want {
			t.Errorf("ParseThink(%q) = %v, %v; want %s", tc.in, th, err, tc.want)
		}
	}
	for _, in := range []string{"x", "-1s", "5s-1s", "exp:0s", "exp:", "2", "1s-", "48h"} {
		if _, err := ParseThink(in); !errors.Is(err, ErrBadSpec) {
			t.Errorf("ParseThink(%q) accepted", in)
		}
	}
}

func TestParseRateAndPhases(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]float64{"5000/s": 5000, "300/min": 5, "2/ms": 2000, "10": 10, "1_000/s": 1000} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "0/s", "-5/s", "x/s", "5/fortnight", "NaN/s", "Inf"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) accepted", in)
		}
	}
	ph, err := ParsePhases("30s@1/s, 30s@2/s,1m@4/s")
	if err != nil || len(ph) != 3 || ph[2].Duration != time.Minute || ph[2].Rate != 4 {
		t.Fatalf("ParsePhases: %v %v", ph, err)
	}
	_, err = ParsePhases("30s@1/s,30s")
	if err == nil || !strings.Contains(err.Error(), "phase 2") {
		t.Fatalf("error must name the phase: %v", err)
	}
}

// parsed reports whether a parser's err is nil, failing t unless an
// error wraps ErrBadSpec.
func parsed(t *testing.T, err error) bool {
	t.Helper()
	if err != nil && !errors.Is(err, ErrBadSpec) {
		t.Fatalf("error without ErrBadSpec: %v", err)
	}
	return err == nil
}

func FuzzParsePhases(f *testing.F) {
	for _, s := range []string{"30s@1/s,30s@2/s", "1m@300/min", "", "@", "1s@", "0s@1/s", "1h@1e9/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ph, err := ParsePhases(s)
		if !parsed(t, err) {
			return
		}
		m := &Phases{Phases: ph}
		if err := m.Validate(); err != nil {
			t.Fatalf("parsed phases %v fail validation: %v", ph, err)
		}
	})
}

func FuzzParseThink(f *testing.F) {
	for _, s := range []string{"2s", "0-5s", "exp:2s", "1ms-1h", "-", "exp:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThink(s)
		if !parsed(t, err) {
			return
		}
		back, err := ParseThink(th.String())
		if err != nil || back != th {
			t.Fatalf("%q -> %v does not round-trip: %v %v", s, th, back, err)
		}
	})
}
