package load

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/segment"
)

// idWorkload records the ids and seeds of the sessions it hands out; each
// session runs ops operations.
type idWorkload struct {
	fakeWorkload
	mu    sync.Mutex
	ids   []uint64
	seeds map[uint64]uint64
}

func (w *idWorkload) NewSession(id, seed uint64) scenario.Session {
	w.mu.Lock()
	w.ids = append(w.ids, id)
	if w.seeds == nil {
		w.seeds = map[uint64]uint64{}
	}
	w.seeds[id] = seed
	w.mu.Unlock()
	return w.fakeWorkload.NewSession(id, seed)
}

// TestClosedSegmentsDealUsers: the segments' users are the whole test's
// users dealt out round robin, with the same session ids and seeds, and
// the ops budget split so that the segments run the whole test's total.
func TestClosedSegmentsDealUsers(t *testing.T) {
	const users, n, ops = 10, 4, 1003
	whole := &idWorkload{fakeWorkload: fakeWorkload{ops: 1}}
	execute(t, whole, &Closed{Users: users}, Options{Ops: ops, Seed: 7})
	var union []uint64
	var total int64
	seeds := map[uint64]uint64{}
	for i := range n {
		w := &idWorkload{fakeWorkload: fakeWorkload{ops: 1}}
		seg := segment.Segment{Index: i, Count: n}
		s, r, _ := execute(t, w, &Closed{Users: users}, Options{Ops: ops, Seed: 7, Segment: seg})
		if want := seg.Share(ops); s.Count != want || r.Claimed() != want {
			t.Errorf("segment %v ran %d operations (claimed %d), want its share %d", seg, s.Count, r.Claimed(), want)
		}
		total += s.Count
		// session id = user + k*users: every session is one of this
		// segment's users'
		for _, id := range w.ids {
			if u := id % users; u%n != uint64(i) {
				t.Errorf("segment %v ran session %d of user %d, which belongs to segment %d", seg, id, u, u%n)
			}
		}
		union = append(union, w.ids...)
		for id, sd := range w.seeds {
			seeds[id] = sd
		}
	}
	if total != ops {
		t.Errorf("segments ran %d operations in all, want %d", total, ops)
	}
	slices.Sort(union)
	wholeIDs := slices.Clone(whole.ids)
	slices.Sort(wholeIDs)
	if !slices.Equal(union[:users], wholeIDs[:users]) {
		t.Errorf("first sessions of the segments %v, whole test %v", union[:users], wholeIDs[:users])
	}
	for id, sd := range whole.seeds {
		if got, ok := seeds[id]; ok && got != sd {
			t.Errorf("session %d has seed %d in a segment, %d in the whole test", id, got, sd)
		}
	}
}

// TestSegmentUsersShare: remainders are spread, never more than one apart.
func TestSegmentUsersShare(t *testing.T) {
	for _, users := range []int64{1, 3, 4, 10, 17} {
		var sum int64
		lo, hi := users, int64(0)
		for i := range 4 {
			s := segment.Segment{Index: i, Count: 4}.Share(users)
			sum += s
			lo, hi = min(lo, s), max(hi, s)
		}
		if sum != users || hi-lo > 1 {
			t.Errorf("%d users over 4 segments: sum %d, shares differ by %d", users, sum, hi-lo)
		}
	}
}

// TestRateSegmentsInterleave: with constant arrivals, the segments'
// schedules are the whole test's: 4 segments at rate/4 run as many
// operations as the whole test in the same time, with distinct workers.
func TestRateSegmentsInterleave(t *testing.T) {
	const rate, workers, n = 400.0, 8, 4
	d := 500 * time.Millisecond
	whole, _, _ := execute(t, &fakeWorkload{}, &Rate{Rate: rate, Arrivals: "constant", Workers: workers}, Options{Duration: d})
	var sum int64
	for i := range n {
		w := &idWorkload{}
		s, _, _ := execute(t, w, &Rate{Rate: rate, Arrivals: "constant", Workers: workers}, Options{Duration: d, Segment: segment.Segment{Index: i, Count: n}})
		sum += s.Count
		if len(w.ids) != workers/n {
			t.Errorf("segment %d started %d workers, want %d", i, len(w.ids), workers/n)
		}
	}
	// 200 operations each; allow the stop's edge on either side.
	if diff := sum - whole.Count; diff < -8 || diff > 8 {
		t.Errorf("4 segments ran %d operations, the whole test %d", sum, whole.Count)
	}
}

// TestPhasesSegmentsDivideArrivals: each segment's sessions arrive at
// rate/N with ids from its own stride.
func TestPhasesSegmentsDivideArrivals(t *testing.T) {
	const n = 4
	ph := []Phase{{Duration: time.Second, Rate: 200}}
	var sum int
	for i := range n {
		w := &idWorkload{fakeWorkload: fakeWorkload{ops: 1}}
		execute(t, w, &Phases{Phases: ph}, Options{Duration: time.Second, Segment: segment.Segment{Index: i, Count: n}})
		for _, id := range w.ids {
			if id%n != uint64(i) {
				t.Fatalf("segment %d started session %d of segment %d", i, id, id%n)
			}
		}
		sum += len(w.ids)
	}
	// 200 arrivals expected in all (Poisson: sd ~14).
	if sum < 140 || sum > 260 {
		t.Errorf("4 segments at 200/s for 1s started %d sessions in all, want about 200", sum)
	}
}
