package ycsb

import (
	"github.com/scalelab/scalelab/scenario/kit"
	"github.com/scalelab/scalelab/scenario/scenariotest"

	"math"
	"strconv"
	"testing"
)

func TestKeyNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		keynum  uint64
		ordered bool
		want    string
	}{
		// YCSB's hashed key names (Utils.fnvhash64), as its load phase writes them.
		{0, false, "user6284781860667377211"},
		{1, false, "user8517097267634966620"},
		{0, true, "user0000000000"},
		{42, true, "user0000000042"},
		{12345678901, true, "user12345678901"},
	} {
		if got := string(appendKey(nil, tc.keynum, tc.ordered)); got != tc.want {
			t.Errorf("appendKey(%d, ordered=%v) = %s, want %s", tc.keynum, tc.ordered, got, tc.want)
		}
	}
	// Ordered keys sort like their numbers.
	a, b := appendKey(nil, 9, true), appendKey(nil, 10, true)
	if string(a) >= string(b) {
		t.Errorf("%s >= %s", a, b)
	}
}

// javaHash is Java's String.hashCode over ASCII text.
func javaHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	return h
}

// naiveValue is YCSB's buildDeterministicValue, transcribed literally:
// hashing the whole string on every step.
func naiveValue(key, field string, size int) string {
	s := key + ":" + field
	for len(s) < size {
		s += ":"
		s += strconv.Itoa(int(javaHash(s)))
	}
	return s[:size]
}

func TestDeterministicValue(t *testing.T) {
	t.Parallel()
	for _, size := range []int{1, 5, 12, 100, 1000} {
		for _, key := range []string{"user1", "user6284781860667377211"} {
			got := string(appendDeterministicValue([]byte("prefix"), []byte(key), "field3", size))
			if want := "prefix" + naiveValue(key, "field3", size); got != want {
				t.Errorf("value(%s, %d) = %q, want %q", key, size, got, want)
			}
		}
	}
}

func TestRandomValuePrintable(t *testing.T) {
	t.Parallel()
	r := kit.NewRNG(1)
	v := appendRandomValue(nil, &r, 10_000)
	if len(v) != 10_000 {
		t.Fatalf("len %d", len(v))
	}
	seen := map[byte]bool{}
	for _, c := range v {
		if c < ' ' || c > '~' {
			t.Fatalf("byte %d not printable", c)
		}
		seen[c] = true
	}
	if len(seen) < 90 {
		t.Errorf("only %d distinct bytes", len(seen))
	}
}

func TestDeterministicForSeed(t *testing.T) {
	t.Parallel()
	scenariotest.Seeded(t, "draws", 7, 8, func(seed uint64) []uint64 {
		r := kit.NewRNG(seed)
		z := newScrambledZipfian(0, 1000, 0.99)
		h := newHotspot(0, 1000, 0.2, 0.8)
		var out []uint64
		for range 100 {
			out = append(out, r.Uint64(), z.next(&r), h.next(&r), uniform{0, 10}.next(&r))
		}
		return out
	})
}

func TestUniformChiSquare(t *testing.T) {
	t.Parallel()
	const buckets, n = 100, 1_000_000
	r := kit.NewRNG(3)
	u := uniform{lo: 10, n: buckets}
	var counts [buckets]int
	for range n {
		v := u.next(&r)
		if v < 10 || v >= 10+buckets {
			t.Fatalf("draw %d out of range", v)
		}
		counts[v-10]++
	}
	exp := float64(n) / buckets
	chi := 0.0
	for _, c := range counts {
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	// 99 degrees of freedom: mean 99, standard deviation 14.
	if chi > 99+6*14 {
		t.Errorf("chi-square %.1f, too far from uniform", chi)
	}
}

func TestZetaCache(t *testing.T) {
	t.Parallel()
	c := &zetaCache{theta: 0.99}
	c.get(1000)
	if got, want := c.get(1500), kit.Zeta(1500, 0.99); math.Abs(got-want) > 1e-12 {
		t.Errorf("zetaCache.get(1500) = %.15g, want %.15g", got, want)
	}
}

func TestScrambledZipfian(t *testing.T) {
	t.Parallel()
	const items, n = 10_000, 1_000_000
	z := newScrambledZipfian(100, items, ycsbTheta)
	r := kit.NewRNG(5)
	counts := map[uint64]int{}
	for range n {
		v := z.next(&r)
		if v < 100 || v >= 100+items {
			t.Fatalf("draw %d out of range", v)
		}
		counts[v]++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	// The most popular key gets the top item of the 10^10-item Zipfian:
	// 1/zeta = 3.78%, plus whatever else hashes to it.
	want := 1 / scrambledZetan
	if got := float64(top) / n; got < want*0.95 || got > want*1.25 {
		t.Errorf("top key frequency %.4f, want about %.4f", got, want)
	}
	// The popular keys are spread out: the top key is not the first.
	if counts[100] == top {
		t.Error("the most popular key is the lowest: not scrambled")
	}
	// A different constant works too (zeta computed, not YCSB's constant).
	z2 := newScrambledZipfian(0, items, 0.5)
	if z2.z.Zetan() < 1000 {
		t.Errorf("zeta(1e10, 0.5) = %g", z2.z.Zetan())
	}
}

func TestHotspot(t *testing.T) {
	t.Parallel()
	const n = 200_000
	h := newHotspot(0, 1000, 0.2, 0.8)
	r := kit.NewRNG(9)
	hot := 0
	for range n {
		v := h.next(&r)
		if v >= 1000 {
			t.Fatalf("draw %d out of range", v)
		}
		if v < 200 {
			hot++
		}
	}
	if f := float64(hot) / n; math.Abs(f-0.8) > 0.01 {
		t.Errorf("hot fraction %.4f, want 0.8", f)
	}
	// Degenerate sets fall back to the other one.
	for _, h := range []hotspot{newHotspot(0, 10, 0, 0.8), newHotspot(0, 10, 1, 0.2)} {
		for range 1000 {
			if v := h.next(&r); v >= 10 {
				t.Fatalf("%+v drew %d", h, v)
			}
		}
	}
}

func TestSkewedLatest(t *testing.T) {
	t.Parallel()
	ctr := kit.NewAckCounter(1000)
	cache := &zetaCache{theta: ycsbTheta}
	l := newSkewedLatest(ctr, cache)
	r := kit.NewRNG(13)
	const n = 100_000
	newest := 0
	for range n {
		v := l.next(&r)
		if v == 0 || v > 999 {
			t.Fatalf("draw %d out of (0, 999]", v)
		}
		if v > 989 {
			newest++
		}
	}
	// The ten newest keys get the ten top Zipfian items: about 30% for
	// 999 items, against 1% uniformly.
	want := kit.ZetaRange(0, 10, ycsbTheta) / kit.Zeta(999, ycsbTheta)
	if f := float64(newest) / n; math.Abs(f-want) > 0.02 {
		t.Errorf("ten newest keys drawn %.3f of the time, want %.3f", f, want)
	}
	// After more inserts the newest key follows the counter.
	for range 500 {
		ctr.Ack(ctr.Take())
	}
	top := uint64(0)
	for range 10_000 {
		top = max(top, l.next(&r))
	}
	if top != 1499 {
		t.Errorf("newest key drawn %d, want 1499", top)
	}
	if l.z.Items() != 1499 {
		t.Errorf("zipfian items %d, want 1499", l.z.Items())
	}
	if math.Abs(l.z.Zetan()-kit.Zeta(1499, ycsbTheta)) > 1e-9 {
		t.Errorf("incremental zeta %.12g, want %.12g", l.z.Zetan(), kit.Zeta(1499, ycsbTheta))
	}
}

func TestOpMix(t *testing.T) {
	t.Parallel()
	const n = 100_000
	for name, def := range workloads {
		c := kit.NewChooser(def.props[:])
		r := kit.NewRNG(17)
		var counts [numOps]int
		for range n {
			counts[c.Next(&r)]++
		}
		for op, p := range def.props {
			if f := float64(counts[op]) / n; math.Abs(f-p) > 0.01 {
				t.Errorf("workload %s: %s fraction %.4f, want %.2f", name, operationNames[op], f, p)
			}
		}
	}
}
