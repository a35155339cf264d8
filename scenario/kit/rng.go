// Package kit holds the building blocks the scenarios share: the
// deterministic random source and its distributions (uniform, Zipfian),
// the weighted operation chooser, the acknowledged counter, a session's
// count of operations, and the checks of scenario settings.
package kit

import "math/bits"

// RNG is a small, fast pseudo-random generator (wyrand). It is not safe for
// concurrent use: each session and each load worker owns one.
type RNG struct{ s uint64 }

// NewRNG returns a RNG seeded from seed (any value, 0 included).
func NewRNG(seed uint64) RNG { return RNG{s: Mix64(seed)} }

// Mix64 is the splitmix64 finaliser: it spreads seed bits over the word.
func Mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Uint64 returns 64 uniform random bits.
func (r *RNG) Uint64() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// Float64 returns a uniform value in [0, 1).
func (r *RNG) Float64() float64 { return float64(r.Uint64()>>11) * 0x1p-53 }

// Intn returns a uniform value in [0, n); n must be > 0. (Lemire's
// multiply-shift; its bias is below 2^-64 * n, far under what matters here.)
func (r *RNG) Intn(n uint64) uint64 {
	hi, _ := bits.Mul64(r.Uint64(), n)
	return hi
}
