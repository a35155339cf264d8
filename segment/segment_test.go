package segment

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	s, err := Parse("2/4")
	if err != nil || s != (Segment{Index: 2, Count: 4}) || s.String() != "2/4" || !s.Split() {
		t.Fatalf("Parse(2/4) = %+v, %v", s, err)
	}
	for in, want := range map[string]string{
		"4/4": "I must be in [0, 3]", "-1/4": "I must be in", "1/0": "N must be in", "a/4": "whole numbers", "3": "want I/N",
		"0/5000": "N must be in [1, 4096]",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", in, err, want)
		}
	}
}

// TestShareAndGlobal: the shares sum to the total, and the segments'
// global numbers are every number once.
func TestShareAndGlobal(t *testing.T) {
	const n = 3
	seen := map[uint64]int{}
	var sum int64
	for i := range n {
		s := Segment{Index: i, Count: n}
		share := s.Share(10)
		sum += share
		for k := range uint64(share) {
			seen[s.Global(k)]++
		}
	}
	if sum != 10 || len(seen) != 10 {
		t.Fatalf("shares sum %d, %d distinct global numbers; want 10 and 10", sum, len(seen))
	}
	for g := range uint64(10) {
		if seen[g] != 1 {
			t.Errorf("global number %d taken %d times", g, seen[g])
		}
	}
	if (Segment{}).Share(7) != 7 || Whole.Global(5) != 5 {
		t.Error("the whole test is not its own share")
	}
}

// TestKeysDisjoint: keys created by different segments never collide, and
// Local inverts Key within a segment's range only.
func TestKeysDisjoint(t *testing.T) {
	const base = 1000
	a, b := Segment{Index: 0, Count: 2}, Segment{Index: 1, Count: 2}
	for _, k := range []int64{0, 1, 5000, KeySpan - 1} {
		ka, kb := a.Key(base, k), b.Key(base, k)
		if ka == kb {
			t.Fatalf("key %d of both segments is %d", k, ka)
		}
		if l, ok := a.Local(base, ka); !ok || l != k {
			t.Errorf("a.Local(a.Key(%d)) = %d, %v", k, l, ok)
		}
		if _, ok := a.Local(base, kb); ok {
			t.Errorf("segment 0 claims segment 1's key %d", kb)
		}
	}
	if Whole.Key(base, 7) != base+7 {
		t.Error("a whole test's keys are not base+k")
	}
}
