package load

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/segment"
)

// userWorkload records, per session id, the operations run and when (ns
// since its base) the first one started; with oneOp its sessions are
// endless and one operation is one loop (scenario.OneOpSessions).
type userWorkload struct {
	nothingToLoad
	sessionOps int // operations per session when not oneOp
	oneOp      bool
	base       func() int64

	mu    sync.Mutex
	ops   map[uint64]int
	first map[uint64]int64
}

var _ scenario.OneOpSessions = (*userWorkload)(nil)

func (w *userWorkload) Operations() []string { return []string{"op"} }
func (w *userWorkload) OneOpSessions() bool  { return w.oneOp }
func (w *userWorkload) NewSession(id, _ uint64) scenario.Session {
	return &userSession{w: w, id: id}
}

type userSession struct {
	w    *userWorkload
	id   uint64
	done opCount
}

func (s *userSession) Next() (int, bool) { return 0, s.done.next(s.w.sessionOps) }

func (s *userSession) Do(context.Context) error {
	now := metrics.Now()
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if s.w.ops == nil {
		s.w.ops, s.w.first = map[uint64]int{}, map[uint64]int64{}
	}
	if _, ok := s.w.first[s.id]; !ok {
		s.w.first[s.id] = now - s.w.base()
	}
	s.w.ops[s.id]++
	return nil
}

// runThreads runs m over wl with a collector that tracks operations in
// flight, returning the summary, the run and the collector.
func runThreads(t *testing.T, wl *userWorkload, m *Threads, opt Options) (metrics.OpSummary, *Run, *metrics.Collector) {
	t.Helper()
	c := metrics.NewCollector(metrics.Config{Ops: wl.Operations(), InFlight: metrics.NewInFlight()})
	wl.base = c.Base
	r, stuck := runCollected(t, wl, c, m, opt)
	if stuck {
		t.Fatal("workers still busy after the drain")
	}
	totals, _, measured := c.Totals()
	s := metrics.Summarize(totals, measured, c.InFlight())
	return s[0], r, c
}

// TestThreadsLoopsExact: every user runs exactly its loops, so the run
// does Users x Loops loops and ends by itself ("completed"): one operation
// per loop where sessions are endless, one session per loop otherwise.
func TestThreadsLoopsExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		users, loops, per int
		oneOp             bool
	}{
		{"one op per loop", 50, 100, 0, true},
		{"one op per loop, sessions of 7", 9, 20, 7, true},
		{"one user", 1, 7, 0, true},
		{"sessions of 3 ops", 20, 5, 3, false},
		{"sessions of 1 op", 13, 11, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wl := &userWorkload{sessionOps: tc.per, oneOp: tc.oneOp}
			m := &Threads{Users: tc.users, RampUp: 20 * time.Millisecond, Loops: tc.loops}
			s, r, _ := runThreads(t, wl, m, Options{})
			perLoop := max(tc.per, 1)
			if tc.oneOp {
				perLoop = 1
			}
			want := int64(tc.users * tc.loops * perLoop)
			if s.Count != want || s.Errors != 0 || s.InFlight != 0 {
				t.Errorf("count %d errors %d in flight %d, want %d = %d users x %d loops x %d ops", s.Count, s.Errors, s.InFlight, want, tc.users, tc.loops, perLoop)
			}
			if m.Total() != int64(tc.users*tc.loops) {
				t.Errorf("Total %d, want %d", m.Total(), tc.users*tc.loops)
			}
			if done, total, ok := LoopProgress(r); !ok || done != total || total != int64(tc.users*tc.loops) {
				t.Errorf("loop progress %d/%d (%v), want %d/%d", done, total, ok, tc.users*tc.loops, tc.users*tc.loops)
			}
			if r.StopReason() != "completed" {
				t.Errorf("stop reason %q, want completed (the last user ended the run)", r.StopReason())
			}
			// per user: sessions are user + k*users
			perUser := map[uint64]int{}
			for id, n := range wl.ops {
				perUser[id%uint64(tc.users)] += n
			}
			if len(perUser) != tc.users {
				t.Errorf("%d users ran operations, want %d", len(perUser), tc.users)
			}
			for u, n := range perUser {
				if n != tc.loops*perLoop {
					t.Errorf("user %d ran %d operations, want %d", u, n, tc.loops*perLoop)
				}
			}
			if !tc.oneOp && len(wl.ops) != tc.users*tc.loops {
				t.Errorf("%d sessions ran, want one per loop: %d", len(wl.ops), tc.users*tc.loops)
			}
		})
	}
}

// TestThreadsStartOffsets: user u starts u*ramp/users after the load
// begins: evenly spaced, the first at once, all within the ramp-up.
func TestThreadsStartOffsets(t *testing.T) {
	t.Parallel()
	m := &Threads{Users: 200, RampUp: 25 * time.Second, Loops: 100}
	for u := range uint64(200) {
		if got, want := m.StartOffset(u), time.Duration(u)*125*time.Millisecond; got != want {
			t.Fatalf("user %d starts at %s, want %s (25s / 200 users apart)", u, got, want)
		}
	}
	odd := &Threads{Users: 3, RampUp: time.Second}
	got := []time.Duration{odd.StartOffset(0), odd.StartOffset(1), odd.StartOffset(2)}
	if want := []time.Duration{0, 333333333, 666666666}; !slices.Equal(got, want) {
		t.Errorf("3 users over 1s start at %v, want %v", got, want)
	}
	huge := &Threads{Users: 1_000_000, RampUp: 24 * time.Hour}
	if got, want := huge.StartOffset(999_999), 24*time.Hour-86400*time.Microsecond; got != want {
		t.Errorf("last of a million users over 24h starts at %s, want %s (no overflow)", got, want)
	}
	if (&Threads{Users: 5}).StartOffset(4) != 0 {
		t.Error("with no ramp-up every user starts at once")
	}
}

// TestThreadsRampStartsUsersOnSchedule: no user's first operation comes
// before its start in the ramp (u*ramp/users), and the users active never
// exceed the users.
func TestThreadsRampStartsUsersOnSchedule(t *testing.T) {
	t.Parallel()
	wl := &userWorkload{oneOp: true}
	m := &Threads{Users: 8, RampUp: 400 * time.Millisecond, Loops: 3}
	s, _, c := runThreads(t, wl, m, Options{})
	if s.Count != 24 {
		t.Fatalf("count %d, want 24", s.Count)
	}
	for u := range uint64(8) {
		first, ok := wl.first[u]
		if !ok {
			t.Fatalf("user %d ran nothing", u)
		}
		if at := int64(m.StartOffset(u)); first < at {
			t.Errorf("user %d started its first operation at %s, before its start in the ramp %s", u, time.Duration(first), time.Duration(at))
		}
	}
	if c.MaxSessions() < 1 || c.MaxSessions() > 8 {
		t.Errorf("max active users %d, want 1..8", c.MaxSessions())
	}
	mean, most, ok := c.InFlightTotals()
	if !ok || most < 1 || most > 8 || mean < 0 || mean > 8 {
		t.Errorf("in flight: mean %.2f max %d (tracked %v), want a max of 1..8 users", mean, most, ok)
	}
}

// TestThreadsSegments: the segments deal the users out round robin, each
// user keeps the whole test's start offset and session, and the segments'
// loops add up to the whole test's Users x Loops.
func TestThreadsSegments(t *testing.T) {
	t.Parallel()
	const users, loops, n = 10, 20, 3
	var total int64
	seen := map[uint64]bool{}
	for i := range n {
		seg := segment.Segment{Index: i, Count: n}
		wl := &userWorkload{oneOp: true}
		m := &Threads{Users: users, RampUp: 90 * time.Millisecond, Loops: loops}
		s, _, _ := runThreads(t, wl, m, Options{Segment: seg})
		if want := seg.Share(users) * loops; s.Count != want {
			t.Errorf("segment %v ran %d operations, want its %d users x %d loops = %d", seg, s.Count, seg.Share(users), loops, want)
		}
		total += s.Count
		for id, ops := range wl.ops {
			if id%n != uint64(i) || seen[id] {
				t.Errorf("segment %v ran user %d (belongs to segment %d, or ran twice)", seg, id, id%n)
			}
			seen[id] = true
			if ops != loops {
				t.Errorf("segment %v: user %d ran %d loops, want %d", seg, id, ops, loops)
			}
			if first := wl.first[id]; first < int64(m.StartOffset(id)) {
				t.Errorf("segment %v: user %d started at %s, before its whole-test start %s", seg, id, time.Duration(first), m.StartOffset(id))
			}
		}
	}
	if total != users*loops || len(seen) != users {
		t.Errorf("segments ran %d operations of %d users, want %d of %d", total, len(seen), users*loops, users)
	}
}

// TestThreadsOpsAndDurationBound: with loops 0, --ops ends the run
// exactly; --ops below Users x Loops ends it early.
func TestThreadsOpsAndDurationBound(t *testing.T) {
	t.Parallel()
	s, r, _ := runThreads(t, &userWorkload{oneOp: true}, &Threads{Users: 4, Loops: 0}, Options{Ops: 1234})
	if s.Count != 1234 || r.StopReason() != "completed" {
		t.Errorf("loops 0, --ops 1234: count %d, stop %q", s.Count, r.StopReason())
	}
	s, _, _ = runThreads(t, &userWorkload{oneOp: true}, &Threads{Users: 4, Loops: 100}, Options{Ops: 150})
	if s.Count != 150 {
		t.Errorf("--ops 150 below 4 x 100 loops: count %d", s.Count)
	}
	s, r, _ = runThreads(t, &userWorkload{oneOp: true}, &Threads{Users: 2, RampUp: time.Hour, Loops: 1}, Options{Duration: 200 * time.Millisecond})
	if s.Count != 1 || r.StopReason() != "duration" {
		t.Errorf("a 1 h ramp cut at 200 ms: count %d (only user 0 starts), stop %q", s.Count, r.StopReason())
	}
}

// TestThreadsValidate: users, ramp-up and loops out of range are refused
// with the flag named.
func TestThreadsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    *Threads
		want string
	}{
		{&Threads{Users: 0, Loops: 1}, "--users 0"},
		{&Threads{Users: 1, RampUp: -time.Second, Loops: 1}, "--ramp-up -1s"},
		{&Threads{Users: 1, RampUp: 25 * time.Hour}, "--ramp-up 25h0m0s"},
		{&Threads{Users: 1, Loops: -1}, "--loops -1"},
	} {
		err := tc.m.Validate()
		if err == nil || !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want ErrBadSpec naming %q", tc.m.Params(), err, tc.want)
		}
	}
	if err := (&Threads{Users: 200, RampUp: 25 * time.Second, Loops: 100}).Validate(); err != nil {
		t.Errorf("the study's thread group: %v", err)
	}
}

func TestThreadsBound(t *testing.T) {
	m := &Threads{Users: 50, Loops: 100}
	if got, want := m.Bound(Options{}), "when each of 50 users has run 100 loops (5,000 loops)"; got != want {
		t.Errorf("Bound = %q, want %q", got, want)
	}
	if got := m.Bound(Options{Duration: time.Minute}); !strings.Contains(got, "or after 1m0s, whichever comes first") {
		t.Errorf("Bound with a duration = %q", got)
	}
	if got := (&Threads{Users: 4}).Bound(Options{Duration: 10 * time.Second}); got != "10s" {
		t.Errorf("Bound without loops = %q, want 10s", got)
	}
}
