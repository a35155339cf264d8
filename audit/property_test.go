package audit

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/scalelab/scalelab/metrics"
)

// randomWrites is a random register history: a few keys, writes that
// overlap or follow each other, with every outcome, deletes and inserts.
func randomWrites(r *rand.Rand) []RegWrite {
	n := 1 + r.IntN(40)
	keys := 1 + r.IntN(4)
	ws := make([]RegWrite, n)
	for i := range ws {
		inv := r.Int64N(100)
		w := RegWrite{Key: int64(r.IntN(keys)), Version: int64(i + 1), Inv: inv, End: inv + r.Int64N(30),
			Delete: r.IntN(5) == 0}
		w.Insert = !w.Delete && r.IntN(8) == 0 // a write is one of update, delete, insert
		switch x := r.IntN(10); {
		case x < 6:
			w.Outcome = OK
		case x < 7:
			w.Outcome, w.Class = Failed, metrics.Rejected
		case x < 9:
			w.Outcome, w.Class, w.End = Unknown, metrics.Timeout, math.MaxInt64
		default:
			w.Outcome, w.End = Invoked, math.MaxInt64
		}
		ws[i] = w
	}
	return ws
}

// verdict is a register's verdict inputs in a comparable form.
func verdict(k regKey) string {
	p, d := slices.Clone(k.puts), slices.Clone(k.deletes)
	slices.Sort(p)
	slices.Sort(d)
	return fmt.Sprintf("key %d initial %v fresh %v puts %v deletes %v", k.key, k.initial, k.fresh, p, d)
}

func verdicts(keys []regKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = verdict(k)
	}
	return out
}

// The incremental History, fed the writes in any order (as sessions'
// outcomes reach it), allows exactly the values the full-history rule
// allows, on random histories; so does a History read back from the
// writes encoded as a binary history cut into random blocks.
func TestIncrementalMatchesFullHistory(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		ws := randomWrites(r)
		want := verdicts(registerKeys(ws))
		order := slices.Clone(ws)
		r.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		if got := verdicts(histOf(order...).registerList()); !slices.Equal(got, want) {
			t.Fatalf("history %d %+v:\nincremental %v\nfull        %v", i, order, got, want)
		}
		if i%4 != 0 {
			continue // one in four also through a binary history
		}
		h, err := Read(bytes.NewReader(encodeRandom(r, ws)))
		if err != nil {
			t.Fatalf("history %d: %v", i, err)
		}
		if got := verdicts(h.registerList()); !slices.Equal(got, want) {
			t.Fatalf("history %d %+v read back from its binary history:\n%v\nwant %v", i, ws, got, want)
		}
		if h.RegisterWrites() != int64(len(ws)) {
			t.Fatalf("history %d: %d writes read back, want %d", i, h.RegisterWrites(), len(ws))
		}
	}
}

// encodeRandom writes ws as a binary history: each write's invocation at
// its time and its outcome at its end (none for Invoked), in time order,
// cut into blocks at random.
func encodeRandom(r *rand.Rand, ws []RegWrite) []byte {
	type ev struct {
		t   int64
		w   RegWrite
		out bool
	}
	var evs []ev
	for _, w := range ws {
		evs = append(evs, ev{t: w.Inv, w: w})
		switch w.Outcome {
		case OK, Failed:
			evs = append(evs, ev{t: w.End, w: w, out: true})
		case Unknown:
			evs = append(evs, ev{t: w.Inv + 50, w: w, out: true})
		}
	}
	slices.SortStableFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		if a.out != b.out { // an invocation before any outcome at the same time
			if a.out {
				return 1
			}
			return -1
		}
		return 0
	})
	out := []byte(Header + "\n")
	var p []byte
	var d deltas
	for _, e := range evs {
		switch {
		case !e.out:
			kind := byte(kindRegWrite)
			if e.w.Delete {
				kind = kindRegDelete
			} else if e.w.Insert {
				kind = kindRegInsert
			}
			p = appendRegInv(p, &d, kind, e.w.Key, e.w.Version, e.w.Inv)
		case e.w.Outcome == OK:
			p = appendRegOut(p, &d, kindRegOK, 0, e.w.Version, e.w.End)
		case e.w.Outcome == Failed:
			p = appendRegOut(p, &d, kindRegFailed, e.w.Class, e.w.Version, e.w.End)
		default:
			p = appendRegOut(p, &d, kindRegUnknown, e.w.Class, e.w.Version, e.t)
		}
		if r.IntN(4) == 0 {
			out = append(out, block(p)...)
			p, d = nil, deltas{}
		}
	}
	if len(p) > 0 {
		out = append(out, block(p)...)
	}
	return out
}
