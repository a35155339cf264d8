package audit

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The id set holds each id once and lists them in ascending order, sparse
// (arrays) or dense (bitmaps), negative ids included, in a few bytes an
// id, and tells which it holds.
func TestIDSet(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	var s idSet
	want := map[int64]bool{}
	add := func(first, n int64) {
		s.add(first, n)
		for k := range n {
			want[first+k] = true
		}
	}
	add(0, 100_000)  // a dense run: bitmaps
	add(-5, 10)      // across zero
	add(1<<40, 3)    // far away
	for range 3000 { // sparse, out of order, with repeats
		add(r.Int64N(1<<36)*3600-(1<<35), 1)
	}
	add(50, 10) // already there
	if s.len() != int64(len(want)) {
		t.Fatalf("len %d, want %d", s.len(), len(want))
	}
	var got []int64
	s.each(func(id int64) bool { got = append(got, id); return true })
	wantList := make([]int64, 0, len(want))
	for id := range want {
		wantList = append(wantList, id)
	}
	slices.Sort(wantList)
	if !slices.Equal(got, wantList) {
		t.Fatalf("each listed %d ids, want %d in order", len(got), len(wantList))
	}
	if b := s.bytes(); b > 2*int64(len(want))+64*int64(len(s.chunks))+16<<10 {
		t.Errorf("%d bytes for %d ids", b, len(want))
	}
	for _, id := range []int64{0, 99_999, -5, 4, 1 << 40, 100_000, -6, 1<<40 + 3, 7 << 50} {
		if s.has(id) != want[id] {
			t.Errorf("has(%d) = %v, want %v", id, s.has(id), want[id])
		}
	}
	for id := range want {
		if !s.has(id) {
			t.Fatalf("has(%d) = false for an id added", id)
		}
	}
	n := 0
	s.each(func(int64) bool { n++; return n < 5 })
	if n != 5 {
		t.Errorf("each went on after false: %d calls", n)
	}
}
