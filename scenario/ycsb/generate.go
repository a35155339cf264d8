package ycsb

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"slices"
	"strconv"
	"sync"
)

// This file holds the random generators of YCSB's CoreWorkload, written from
// the algorithm descriptions: uniform, Zipfian (Gray et al., "Quickly
// generating billion-record synthetic databases", SIGMOD 1994), scrambled
// Zipfian, skewed-latest and hotspot choices (over the acknowledged insert
// counter, kit.AckCounter), key names and field values. Every generator
// draws from a rng the caller owns, so sessions share no mutable state on
// the hot path.

// fnv64 is YCSB's Utils.fnvhash64: FNV-1a over the eight bytes of v, low
// byte first, then the absolute value of the result read as a signed
// 64-bit integer.
func fnv64(v uint64) uint64 {
	h := uint64(0xcbf29ce484222325)
	for range 8 {
		h ^= v & 0xff
		h *= 0x100000001b3
		v >>= 8
	}
	if int64(h) < 0 {
		h = -h
	}
	return h
}

// orderedKeyDigits is the zero-padded width of key numbers in ordered
// insert order, so that key names sort like key numbers.
const orderedKeyDigits = 10

// appendKey appends YCSB's key name for keynum: "user" followed by the
// decimal FNV hash of keynum (hashed insert order, YCSB's buildKeyName) or
// by keynum itself zero-padded to 10 digits (ordered).
func appendKey(dst []byte, keynum uint64, ordered bool) []byte {
	dst = append(dst, "user"...)
	if !ordered {
		return strconv.AppendUint(dst, fnv64(keynum), 10)
	}
	var tmp [20]byte
	d := strconv.AppendUint(tmp[:0], keynum, 10)
	for i := len(d); i < orderedKeyDigits; i++ {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

// appendDeterministicValue appends the value YCSB's data-integrity mode
// writes for a field: key + ":" + field, then repeatedly ":" and the Java
// String.hashCode of everything so far, cut to size bytes. The hash is kept
// incrementally, so this is linear in size.
func appendDeterministicValue(dst, key []byte, field string, size int) []byte {
	start := len(dst)
	dst = append(dst, key...)
	dst = append(dst, ':')
	dst = append(dst, field...)
	var h int32
	for _, c := range dst[start:] {
		h = 31*h + int32(c)
	}
	for len(dst)-start < size {
		dst = append(dst, ':')
		h = 31*h + ':'
		p := len(dst)
		dst = strconv.AppendInt(dst, int64(h), 10)
		for _, c := range dst[p:] {
			h = 31*h + int32(c)
		}
	}
	return dst[:start+size]
}

// appendRandomValue appends size random printable ASCII bytes (32..126),
// like YCSB's RandomByteIterator when data integrity is off.
func appendRandomValue(dst []byte, r *kit.RNG, size int) []byte {
	n := len(dst)
	dst = slices.Grow(dst, size)[:n+size]
	b := dst[n:]
	for len(b) >= 8 {
		x := r.Uint64()
		_ = b[7]
		for i := range 8 {
			b[i] = ' ' + byte(((x>>(8*i))&0xff*95)>>8)
		}
		b = b[8:]
	}
	x := r.Uint64()
	for i := range b {
		b[i] = ' ' + byte(((x>>(8*i))&0xff*95)>>8)
	}
	return dst
}

// uniform chooses uniformly in [lo, lo+n).
type uniform struct{ lo, n uint64 }

func (u uniform) next(r *kit.RNG) uint64 { return u.lo + r.Intn(u.n) }

// scrambledItems and scrambledZetan are YCSB's ScrambledZipfianGenerator
// constants: the fixed item space, and zeta over it for theta 0.99.
const (
	scrambledItems = 10_000_000_000
	scrambledZetan = 26.46902820178302
	ycsbTheta      = 0.99
)

// scrambledZipfian draws Zipfian over a large fixed item space and hashes
// the draw into [lo, lo+n), so popular items are spread over the key space
// and stay put when n changes (YCSB's ScrambledZipfianGenerator).
type scrambledZipfian struct {
	z     kit.Zipfian
	lo, n uint64
}

func newScrambledZipfian(lo, n uint64, theta float64) *scrambledZipfian {
	zetan := scrambledZetan
	if theta != ycsbTheta {
		zetan = kit.Zeta(scrambledItems, theta)
	}
	return &scrambledZipfian{z: kit.NewZipfian(scrambledItems, theta, zetan), lo: lo, n: n}
}

func (s *scrambledZipfian) next(r *kit.RNG) uint64 { return s.lo + fnv64(s.z.Next(r))%s.n }

// hotspot chooses from the first hot items of [lo, lo+hot+cold) with
// probability opFrac, else from the cold rest, uniformly within each set
// (YCSB's HotspotIntegerGenerator).
type hotspot struct {
	lo, hot, cold uint64
	opFrac        float64
}

func newHotspot(lo, n uint64, dataFrac, opFrac float64) hotspot {
	hot := uint64(float64(n) * dataFrac)
	return hotspot{lo: lo, hot: hot, cold: n - hot, opFrac: opFrac}
}

func (h hotspot) next(r *kit.RNG) uint64 {
	if (r.Float64() < h.opFrac && h.hot > 0) || h.cold == 0 {
		return h.lo + r.Intn(h.hot)
	}
	return h.lo + h.hot + r.Intn(h.cold)
}

// zetaCache holds zeta(n, theta) for the latest n asked for, so that a new
// session of a skewed-latest workload does not sum millions of terms.
type zetaCache struct {
	mu    sync.Mutex
	theta float64
	n     uint64
	zetan float64
}

func (c *zetaCache) get(n uint64) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case n == c.n:
	case n > c.n && c.n > 0 && n-c.n <= kit.ExactZetaTerms:
		c.zetan += kit.ZetaRange(c.n, n, c.theta)
		c.n = n
	default:
		c.n, c.zetan = n, kit.Zeta(n, c.theta)
	}
	return c.zetan
}

// localZetaSteps is how far behind the insert counter a session's own zeta
// may fall before it asks the shared cache rather than summing the gap.
const localZetaSteps = 4096

// skewedLatest chooses recently inserted keys more often: the newest
// acknowledged key number minus a Zipfian draw over all of them (YCSB's
// SkewedLatestGenerator). Each session owns one; the item count follows the
// insert counter, with zeta updated incrementally as it grows.
type skewedLatest struct {
	ctr   *kit.AckCounter
	cache *zetaCache
	z     kit.Zipfian
}

func newSkewedLatest(ctr *kit.AckCounter, cache *zetaCache) skewedLatest {
	n := max(ctr.Last(), 1)
	return skewedLatest{ctr: ctr, cache: cache, z: kit.NewZipfian(n, cache.theta, cache.get(n))}
}

func (l *skewedLatest) next(r *kit.RNG) uint64 {
	last := l.ctr.Last()
	if last == 0 {
		return 0
	}
	if last != l.z.Items() {
		if last > l.z.Items() && last-l.z.Items() <= localZetaSteps {
			l.z.SetItems(last, l.z.Zetan()+kit.ZetaRange(l.z.Items(), last, l.z.Theta()))
		} else {
			l.z.SetItems(last, l.cache.get(last))
		}
	}
	return last - l.z.Next(r)
}
