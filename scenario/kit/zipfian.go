package kit

import "math"

// ExactZetaTerms is how many terms zeta sums one by one; beyond that it adds
// the Euler-Maclaurin estimate of the tail, exact to double precision.
const ExactZetaTerms = 1 << 20

// ZetaRange returns the sum of 1/i^theta for i in (from, to].
func ZetaRange(from, to uint64, theta float64) float64 {
	sum := 0.0
	for i := from + 1; i <= to; i++ {
		sum += 1 / math.Pow(float64(i), theta)
	}
	return sum
}

// Zeta returns the generalised harmonic number H(n, theta): the sum of
// 1/i^theta for i in [1, n].
func Zeta(n uint64, theta float64) float64 {
	if n <= ExactZetaTerms {
		return ZetaRange(0, n, theta)
	}
	m := uint64(ExactZetaTerms)
	fm, fn := float64(m), float64(n)
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	d1 := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	d3 := func(x float64) float64 { return -theta * (theta + 1) * (theta + 2) * math.Pow(x, -theta-3) }
	var integral float64
	if theta == 1 {
		integral = math.Log(fn / fm)
	} else {
		integral = (math.Pow(fn, 1-theta) - math.Pow(fm, 1-theta)) / (1 - theta)
	}
	tail := integral + (f(fn)-f(fm))/2 + (d1(fn)-d1(fm))/12 - (d3(fn)-d3(fm))/720
	return ZetaRange(0, m, theta) + tail
}

// Zipfian chooses in [0, items) with item i drawn with probability
// proportional to 1/(i+1)^theta, in constant time per draw, by the method of
// Gray et al. It needs 0 < theta < 1 and Zeta(items, theta).
type Zipfian struct {
	items uint64
	theta float64
	alpha float64 // 1 / (1 - theta)
	zeta2 float64 // Zeta(2, theta)
	half  float64 // 1 + 0.5^theta
	zetan float64 // Zeta(items, theta)
	eta   float64
	// intAlpha is alpha rounded when it is within 1e-9 of an integer (100
	// for YCSB's theta 0.99), so draws use a few multiplications instead of
	// exp and log; else 0.
	intAlpha int
}

// NewZipfian returns a Zipfian over items with skew theta; zetan must be
// Zeta(items, theta).
func NewZipfian(items uint64, theta, zetan float64) Zipfian {
	z := Zipfian{
		theta: theta,
		alpha: 1 / (1 - theta),
		zeta2: ZetaRange(0, 2, theta),
		half:  1 + math.Pow(0.5, theta),
	}
	if k := math.Round(z.alpha); math.Abs(z.alpha-k) <= 1e-9*z.alpha && k <= 1<<16 {
		z.intAlpha = int(k)
	}
	z.SetItems(items, zetan)
	return z
}

// SetItems changes the item count; zetan must be Zeta(items, theta).
func (z *Zipfian) SetItems(items uint64, zetan float64) {
	z.items, z.zetan = items, zetan
	z.eta = (1 - math.Pow(2/float64(items), 1-z.theta)) / (1 - z.zeta2/zetan)
}

// Next draws an item.
func (z *Zipfian) Next(r *RNG) uint64 {
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.half {
		return 1
	}
	// This is on the hot path of every request: x^alpha by squaring when
	// alpha is integral, else as exp(alpha log x), three times faster than
	// math.Pow for a non-integral exponent.
	x := z.eta*u - z.eta + 1
	var p float64
	if z.intAlpha > 0 {
		p = powInt(x, z.intAlpha)
	} else {
		p = math.Exp(z.alpha * math.Log(x))
	}
	v := uint64(float64(z.items) * p)
	if v >= z.items {
		v = z.items - 1
	}
	return v
}

// powInt returns x^k for k >= 0 by repeated squaring.
func powInt(x float64, k int) float64 {
	r := 1.0
	for k > 0 {
		if k&1 != 0 {
			r *= x
		}
		x *= x
		k >>= 1
	}
	return r
}

// Items returns the number of items.
func (z *Zipfian) Items() uint64 { return z.items }

// Zetan returns Zeta(Items(), theta), as given to NewZipfian or SetItems.
func (z *Zipfian) Zetan() float64 { return z.zetan }

// Theta returns the skew.
func (z *Zipfian) Theta() float64 { return z.theta }
