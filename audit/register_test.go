package audit

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
)

// fakeRegs is a register store: the version each key holds (Absent when
// missing from the map).
type fakeRegs map[int64]int64

func (f fakeRegs) ReadVersions(_ context.Context, keys, versions []int64) error {
	for i, k := range keys {
		v, ok := f[k]
		if !ok {
			v = Absent
		}
		versions[i] = v
	}
	return nil
}

const open = math.MaxInt64

// w builds a register write; end < 0 means the outcome is unknown.
func w(key, ver, inv, end int64, out Outcome, del bool) RegWrite {
	if end < 0 {
		end = open
	}
	return RegWrite{Key: key, Version: ver, Inv: inv, End: end, Outcome: out, Delete: del}
}

// The rule on deliberate interleavings: which final values each history
// allows.
func TestRegisterRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		writes []RegWrite
		ok     []int64 // versions the register may hold
		bad    []int64 // versions it may not
	}{
		{"sequential: the last acknowledged write wins",
			[]RegWrite{w(1, 1, 0, 10, OK, false), w(1, 2, 20, 30, OK, false)}, []int64{2}, []int64{1, Initial, Absent}},
		{"overlapping acknowledged writes are ambiguous among themselves",
			[]RegWrite{w(1, 1, 0, 20, OK, false), w(1, 2, 10, 30, OK, false)}, []int64{1, 2}, []int64{Initial, Absent}},
		{"a write that completed before a later one began is superseded, even if a third overlaps",
			[]RegWrite{w(1, 1, 0, 5, OK, false), w(1, 2, 10, 30, OK, false), w(1, 3, 20, 40, OK, false)}, []int64{2, 3}, []int64{1}},
		{"an unknown write may be final at any time",
			[]RegWrite{w(1, 1, 0, -1, Unknown, false), w(1, 2, 20, 30, OK, false)}, []int64{1, 2}, []int64{Initial}},
		{"a failed write never is, and the initial value stays when nothing was acknowledged",
			[]RegWrite{w(1, 1, 0, 10, Failed, false), w(1, 2, 20, -1, Unknown, false)}, []int64{Initial, 2}, []int64{1, Absent}},
		{"an unknown write alone: initial or it",
			[]RegWrite{w(1, 1, 0, -1, Invoked, false)}, []int64{Initial, 1}, []int64{Absent}},
		{"an acknowledged delete last: absent only",
			[]RegWrite{w(1, 1, 0, 10, OK, false), w(1, 2, 20, 30, OK, true)}, []int64{Absent}, []int64{1, Initial}},
		{"an unknown insert of a new key: absent or it",
			[]RegWrite{{Key: 1, Version: 1, Inv: 0, End: open, Outcome: Unknown, Insert: true}}, []int64{Absent, 1}, []int64{Initial}},
		{"an acknowledged insert then a lost update",
			[]RegWrite{{Key: 1, Version: 1, Inv: 0, End: 5, Outcome: OK, Insert: true}, w(1, 2, 10, 20, OK, false)}, []int64{2}, []int64{1, Absent, Initial}},
		{"a delete overlapping a write: either",
			[]RegWrite{w(1, 1, 0, 25, OK, false), w(1, 2, 20, 30, OK, true)}, []int64{Absent, 1}, []int64{Initial}},
	} {
		for _, rule := range []struct {
			name string
			keys []regKey
		}{{"full history", registerKeys(tc.writes)}, {"incremental", histOf(tc.writes...).registerList()},
			{"incremental, reversed", histOf(reversed(tc.writes)...).registerList()}} {
			keys := rule.keys
			if len(keys) != 1 {
				t.Fatalf("%s (%s): %d keys", tc.name, rule.name, len(keys))
			}
			for _, v := range tc.ok {
				if !keys[0].allows(v) {
					t.Errorf("%s (%s): version %d refused (may hold %v)", tc.name, rule.name, v, keys[0].want())
				}
			}
			for _, v := range tc.bad {
				if keys[0].allows(v) {
					t.Errorf("%s (%s): version %d accepted (may hold %v)", tc.name, rule.name, v, keys[0].want())
				}
			}
		}
	}
}

// A key whose every write failed was not changed by the run: not checked.
func TestRegisterAllFailedNotChecked(t *testing.T) {
	t.Parallel()
	if keys := registerKeys([]RegWrite{w(1, 1, 0, 10, Failed, false)}); len(keys) != 0 {
		t.Errorf("keys %+v", keys)
	}
	if keys := histOf(w(1, 1, 0, 10, Failed, false)).registerList(); len(keys) != 0 {
		t.Errorf("incremental: keys %+v", keys)
	}
}

// CheckRegisters names lost and resurrected registers and passes the rest.
func TestCheckRegisters(t *testing.T) {
	t.Parallel()
	h := histOf(
		w(1, 1, 0, 10, OK, false), w(1, 2, 20, 30, OK, false), // holds 2: fine
		w(2, 3, 0, 10, OK, false), w(2, 4, 20, 30, OK, false), // holds 3: lost update
		w(3, 5, 0, 10, OK, true),                              // holds initial: resurrected (deleted key back)
		w(4, 6, 0, 10, OK, false),                             // absent: lost
		w(5, 7, 0, 20, OK, false), w(5, 8, 10, 30, OK, false), // holds 7: ambiguous, fine
	)
	store := fakeRegs{1: 2, 2: 3, 3: Initial, 5: 7}
	a, err := CheckRegisters(context.Background(), h, store, CheckConfig{Batch: 2, Workers: 2, Settle: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Checked || a.Keys != 5 || a.ReadBack != 5 || a.Lost != 2 || a.Resurrected != 1 || a.Ambiguous != 1 || a.Acknowledged != 8 {
		t.Fatalf("audit %+v", a)
	}
	if len(a.Examples) != 3 || a.Examples[0].Key != 2 || a.Examples[0].Seen != 3 || a.Examples[1].Kind != "resurrected" || a.Examples[2].Seen != Absent {
		t.Errorf("examples %+v", a.Examples)
	}
}

type failingRegs struct{}

func (failingRegs) ReadVersions(context.Context, []int64, []int64) error {
	return errors.New("store down")
}

func TestCheckRegistersReadError(t *testing.T) {
	t.Parallel()
	h := histOf(w(1, 1, 0, 10, OK, false))
	a, err := CheckRegisters(context.Background(), h, failingRegs{}, CheckConfig{Retries: 1})
	if err == nil || a.Checked || !strings.Contains(a.Error, "store down") {
		t.Fatalf("err %v, audit %+v", err, a)
	}
}

// Register writes logged through a Log read back with their versions,
// times and outcomes.
func TestRegisterHistoryRoundTrip(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/history.log"
	wr := mustCreate(t, path, 2)
	l := wr.Log(1)
	l.Writing(100, 1)
	v1 := l.Updating(7, false)
	l.Done(nil)
	v2 := l.Updating(7, true)
	l.Done(metrics.WithClass(metrics.Timeout, errors.New("slow")))
	v3 := l.Updating(8, false)
	l.Done(metrics.WithClass(metrics.Rejected, errors.New("busy")))
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	spans, r := walkFile(t, path)
	if len(spans) != 1 || spans[0].Outcome != OK {
		t.Errorf("item spans %+v", spans)
	}
	slices.SortFunc(r, func(a, b RegWrite) int { return cmp.Compare(a.Version, b.Version) })
	if len(r) != 3 || v1 <= wr.base || v2 != v1+1 || v3 != v2+1 || r[0].Version != v1 {
		t.Fatalf("registers %+v, versions %d %d %d", r, v1, v2, v3)
	}
	if r[0].Outcome != OK || r[0].End < r[0].Inv || r[1].Outcome != Unknown || !r[1].Delete || r[1].End != open || r[2].Outcome != Failed || r[2].Class != metrics.Rejected {
		t.Errorf("registers %+v", r)
	}
}

// TestRegisterNotApplied: a write the session says the store refused
// is failed (known not applied) even though its operation succeeded, so a
// later answer that found the request already answered is not taken for
// the register's final value; the other writes keep the operation's
// outcome.
func TestRegisterNotApplied(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/history.log"
	wr := mustCreate(t, path, 1)
	l := wr.Log(1)
	l.Updating(5, false)
	l.Done(nil)
	l.Updating(5, false)
	l.NotApplied()
	l.Done(nil)
	l.Updating(6, false)
	l.Done(nil)
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	_, r := walkFile(t, path)
	slices.SortFunc(r, func(a, b RegWrite) int { return cmp.Compare(a.Version, b.Version) })
	if len(r) != 3 || r[0].Outcome != OK || r[1].Outcome != Failed || r[1].Class != metrics.NotFound || r[2].Outcome != OK {
		t.Fatalf("registers %+v", r)
	}
	h, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keys := h.registerList()
	if !keys[0].allows(r[0].Version) || keys[0].allows(r[1].Version) {
		t.Errorf("key 5 may hold %v; want version %d only", keys[0].want(), r[0].Version)
	}
}

func TestRegisterLinesRejected(t *testing.T) {
	t.Parallel()
	for _, line := range []string{"O 1 5 10", "w 1 0 10", "w 1 2", "w 1 2 3\nw 4 2 5"} {
		_, err := Read(bytes.NewBufferString(headerV2 + "\n" + line + "\n"))
		if err == nil {
			t.Errorf("%q accepted", line)
		}
	}
}

// reversed is the writes in the opposite order.
func reversed(ws []RegWrite) []RegWrite {
	out := slices.Clone(ws)
	slices.Reverse(out)
	return out
}

// A register holding a version later than any of the history's was
// overwritten since the run: not judged. After a later run on the same
// store, so is one holding its value from before the run or nothing; an
// older version of the run's own writes is still lost.
func TestCheckRegistersOverwritten(t *testing.T) {
	t.Parallel()
	h := histOf(
		w(1, 1, 0, 10, OK, false), w(1, 2, 20, 30, OK, false), // holds 9: a later version
		w(2, 3, 0, 10, OK, false),                             // holds initial
		w(3, 4, 0, 10, OK, false),                             // absent
		w(4, 5, 0, 10, OK, false), w(4, 6, 20, 30, OK, false), // holds 5: lost
	)
	regs := fakeRegs{1: 9, 2: Initial, 4: 5}
	for _, tc := range []struct {
		later             bool
		lost, overwritten int64
	}{{false, 3, 1}, {true, 1, 3}} {
		a, err := CheckRegisters(context.Background(), h, regs, CheckConfig{Settle: time.Millisecond, LaterRun: tc.later})
		if err != nil {
			t.Fatal(err)
		}
		if a.Lost != tc.lost || a.Overwritten != tc.overwritten {
			t.Errorf("later run %v: %d lost, %d overwritten; want %d, %d", tc.later, a.Lost, a.Overwritten, tc.lost, tc.overwritten)
		}
	}
	// Items: absent after a later run are not judged either.
	s := &store{has: map[int64]bool{1: true}}
	a, err := Check(context.Background(), history(Span{First: 1, N: 3, Outcome: OK}), s, CheckConfig{LaterRun: true})
	if err != nil || a.Lost != 0 || a.Overwritten != 2 {
		t.Fatalf("items after a later run: %+v, %v: want 2 overwritten, none lost", a, err)
	}
}
