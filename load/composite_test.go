package load

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

// compositeWorkload's sessions post (slow), wait, then read; the post and
// the read form the composite "client".
type compositeWorkload struct {
	nothingToLoad
	post, read, wait time.Duration
	failRead         bool
	perSession       int // operations of a session; 0: endless
}

const (
	cPost = iota
	cRead
	cClient
)

func (w *compositeWorkload) Operations() []string { return []string{"post", "read", "client"} }
func (w *compositeWorkload) NewSession(id, seed uint64) scenario.Session {
	return &compositeSession{w: w}
}

type compositeSession struct {
	w  *compositeWorkload
	op int
	n  opCount
}

// Next alternates posts and reads.
func (s *compositeSession) Next() (int, bool) {
	s.op = int(s.n) % 2
	return s.op, s.n.next(s.w.perSession)
}

func (s *compositeSession) Do(ctx context.Context) error {
	d := s.w.post
	if s.op == cRead {
		d = s.w.read
	}
	time.Sleep(d)
	if s.op == cRead && s.w.failRead {
		return errors.New("read failed")
	}
	return nil
}

// Think is the client's wait after the post.
func (s *compositeSession) Think() (time.Duration, bool) { return s.w.wait, s.op == cRead }

func (s *compositeSession) Composite() (int, scenario.Step) {
	if s.op == cPost {
		return cClient, scenario.Begin
	}
	return cClient, scenario.End
}

// sampleSink keeps every raw sample in recording order.
type sampleSink struct {
	mu sync.Mutex
	s  []metrics.Sample
}

func (k *sampleSink) Interval(iv *metrics.Interval) error {
	k.mu.Lock()
	k.s = append(k.s, iv.Samples...)
	k.mu.Unlock()
	return nil
}

func runComposite(t *testing.T, wl *compositeWorkload, m Model, opt Options) []metrics.Sample {
	t.Helper()
	sink := &sampleSink{}
	c := metrics.NewCollector(metrics.Config{Ops: wl.Operations(), Open: m.Open(), Samples: true, Sinks: []metrics.Sink{sink}})
	runCollected(t, wl, c, m, opt)
	return sink.s
}

// checkComposites checks every composite sample of one worker's samples
// (post, read, client, ...): it is timed from the post's intended start to
// the read's end, so its latency is the post's latency (from the post's
// intended start) plus the time from the post's end to the read's end.
func checkComposites(t *testing.T, ss []metrics.Sample, wantClass metrics.Class) (n int, lagged int) {
	t.Helper()
	for i := 0; i+2 < len(ss); i++ {
		p, r, c := ss[i], ss[i+1], ss[i+2]
		if p.Op != cPost || r.Op != cRead || c.Op != cClient {
			continue
		}
		if want := p.LatencyNs + (r.EndNs - p.EndNs); c.LatencyNs != want {
			t.Fatalf("composite %d: latency %d ns, want the post's %d + %d until the read's end = %d", n, c.LatencyNs, p.LatencyNs, r.EndNs-p.EndNs, want)
		}
		if c.EndNs != r.EndNs || c.Class != wantClass {
			t.Fatalf("composite %d: end %d class %v, want the read's end %d and class %v", n, c.EndNs, c.Class, r.EndNs, wantClass)
		}
		if p.LatencyNs > p.ServiceNs+int64(time.Millisecond) {
			lagged++
		}
		n++
		i += 2
	}
	return n, lagged
}

// checkWaitingComposites checks the composites of samples ss of wl
// (checkComposites, all succeeded): there are want of them (why: what
// makes that many), each spanning at least the post, the client's wait and
// the read.
func checkWaitingComposites(t *testing.T, ss []metrics.Sample, wl *compositeWorkload, want int, why string) {
	t.Helper()
	if n, _ := checkComposites(t, ss, metrics.OK); n != want {
		t.Fatalf("%d composites recorded, want %d (%s)", n, want, why)
	}
	for _, s := range ss {
		if s.Op == cClient && s.LatencyNs < int64(wl.post+wl.wait+wl.read) {
			t.Fatalf("composite latency %v: shorter than the post, wait and read (%v)", time.Duration(s.LatencyNs), wl.post+wl.wait+wl.read)
		}
	}
}

// TestCompositeClosedIncludesWait: in the closed model the composite spans
// the post, the client's wait and the read.
func TestCompositeClosedIncludesWait(t *testing.T) {
	t.Parallel()
	wl := &compositeWorkload{post: 5 * time.Millisecond, read: time.Millisecond, wait: 30 * time.Millisecond}
	ss := runComposite(t, wl, &Closed{Users: 1}, Options{Ops: 20})
	checkWaitingComposites(t, ss, wl, 10, "20 operations")
}

// TestCompositeThreads: the threads model records composites as the
// closed model does, each spanning the post, the wait and the read, and
// its users end after their loops (a session each: a post and a read).
func TestCompositeThreads(t *testing.T) {
	t.Parallel()
	wl := &compositeWorkload{post: 2 * time.Millisecond, read: time.Millisecond, wait: 10 * time.Millisecond, perSession: 2}
	ss := runComposite(t, wl, &Threads{Users: 1, RampUp: 5 * time.Millisecond, Loops: 3}, Options{Duration: time.Minute})
	checkWaitingComposites(t, ss, wl, 3, "3 loops of a post and a read")
	if len(ss) != 9 {
		t.Fatalf("%d samples, want 9 (3 posts, 3 reads, 3 composites)", len(ss))
	}
}

// TestCompositeRateFromIntendedStart: in the rate model a post that starts
// behind its schedule (a post and a read take 26 ms of the 20 ms their two
// arrivals are apart, so the lag grows) makes the
// composite count from the post's intended start, not its actual start.
func TestCompositeRateFromIntendedStart(t *testing.T) {
	t.Parallel()
	wl := &compositeWorkload{post: 25 * time.Millisecond, read: time.Millisecond}
	ss := runComposite(t, wl, &Rate{Rate: 100, Arrivals: "constant", Workers: 1}, Options{Ops: 30})
	n, lagged := checkComposites(t, ss, metrics.OK)
	if n != 15 {
		t.Fatalf("%d composites, want 15", n)
	}
	if lagged < 5 {
		t.Fatalf("only %d of %d posts started behind their schedule: the test needs the lag it checks", lagged, n)
	}
}

// TestCompositeFailsWithItsOperation: a failed read fails the composite.
func TestCompositeFailsWithItsOperation(t *testing.T) {
	t.Parallel()
	wl := &compositeWorkload{post: time.Millisecond, read: time.Millisecond, failRead: true}
	ss := runComposite(t, wl, &Closed{Users: 1}, Options{Ops: 6})
	if n, _ := checkComposites(t, ss, metrics.Other); n != 3 {
		t.Fatalf("%d failed composites, want 3", n)
	}
}
