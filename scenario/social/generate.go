package social

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// rng is a small, fast pseudo-random generator (wyrand). It is not safe for
// concurrent use: each session, load worker and graph build owns one.
type rng struct{ s uint64 }

// newRNG returns a rng seeded from seed (any value, 0 included).
func newRNG(seed uint64) rng { return rng{s: mix64(seed)} }

// mix64 is the splitmix64 finaliser: it spreads the bits of x over the word.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (r *rng) uint64() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// float64 returns a uniform value in [0, 1).
func (r *rng) float64() float64 { return float64(r.uint64()>>11) * 0x1p-53 }

// intn returns a uniform value in [0, n); n must be > 0 (Lemire's
// multiply-shift; its bias is below n/2^64).
func (r *rng) intn(n uint64) uint64 {
	hi, _ := bits.Mul64(r.uint64(), n)
	return hi
}

// pick returns a uniformly chosen element of list.
func pick(r *rng, list []string) string { return list[r.intn(uint64(len(list)))] }

var firstNames = []string{"Ada", "Alan", "Amara", "Ana", "Ben", "Bea", "Carlos", "Chen", "Dara", "David",
	"Elena", "Emil", "Fatima", "Felix", "Grace", "Hana", "Ines", "Ivan", "Jae", "Jonas",
	"Kai", "Keiko", "Lena", "Liam", "Maya", "Mateo", "Nadia", "Noah", "Olga", "Omar",
	"Priya", "Quinn", "Rosa", "Sam", "Sofia", "Tariq", "Uma", "Vera", "Wei", "Zoe"}

var lastNames = []string{"Abe", "Berg", "Costa", "Diaz", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
	"Kim", "Larsen", "Moreau", "Nakamura", "Okafor", "Petrov", "Quist", "Rossi", "Silva", "Tanaka",
	"Ueda", "Varga", "Weber", "Xu", "Yilmaz", "Zhang", "Novak", "Lopez", "Murphy", "Singh",
	"Schmidt", "Olsen", "Kowalski", "Dubois", "Ferreira", "Horvat", "Iqbal", "Kaur", "Mensah", "Nguyen"}

// cities pairs each city with its country.
var cities = [][2]string{{"Oslo", "NO"}, {"Bergen", "NO"}, {"Stockholm", "SE"}, {"Copenhagen", "DK"},
	{"Helsinki", "FI"}, {"Berlin", "DE"}, {"Munich", "DE"}, {"Paris", "FR"}, {"Lyon", "FR"}, {"Madrid", "ES"},
	{"Lisbon", "PT"}, {"Rome", "IT"}, {"Milan", "IT"}, {"Vienna", "AT"}, {"Prague", "CZ"}, {"Warsaw", "PL"},
	{"Budapest", "HU"}, {"Athens", "GR"}, {"Dublin", "IE"}, {"London", "GB"}, {"Leeds", "GB"}, {"Amsterdam", "NL"},
	{"Brussels", "BE"}, {"Zurich", "CH"}, {"Istanbul", "TR"}, {"Cairo", "EG"}, {"Lagos", "NG"}, {"Nairobi", "KE"},
	{"Mumbai", "IN"}, {"Delhi", "IN"}, {"Tokyo", "JP"}, {"Osaka", "JP"}, {"Seoul", "KR"}, {"Shanghai", "CN"},
	{"Sydney", "AU"}, {"Toronto", "CA"}, {"New York", "US"}, {"Austin", "US"}, {"Mexico City", "MX"}, {"Sao Paulo", "BR"}}

var words = []string{"photo", "travel", "coffee", "music", "hiking", "cats", "dogs", "food", "art", "design",
	"code", "sunset", "beach", "mountains", "city", "friends", "family", "books", "film", "cycling",
	"running", "garden", "street", "portrait", "light", "colour", "black", "white", "weekend", "morning",
	"night", "summer", "winter", "rain", "snow", "lake", "forest", "market", "festival", "concert",
	"lover", "fan", "of", "and", "the", "with", "always", "new", "old", "little",
	"big", "happy", "curious", "maker", "dreamer", "explorer", "student", "teacher", "chef", "engineer"}

// appendWords appends n random words separated by spaces.
func appendWords(b *strings.Builder, r *rng, n int) {
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(pick(r, words))
	}
}

// randomWords returns between lo and hi random words.
func randomWords(r *rng, lo, hi int) string {
	var b strings.Builder
	appendWords(&b, r, lo+int(r.intn(uint64(hi-lo+1))))
	return b.String()
}

// fiveYearsMs is the span of generated sign-up times.
const fiveYearsMs = 5 * 365 * 24 * 3600 * 1000

// NewUser returns user number n of the data set generated from seed: the
// same seed and number always give the same user, whichever worker makes
// it.
func NewUser(seed, n uint64) User {
	r := newRNG(seed ^ mix64(n+1))
	first, last := pick(&r, firstNames), pick(&r, lastNames)
	city := cities[r.intn(uint64(len(cities)))]
	handle := strings.ToLower(first) + "." + strings.ToLower(last) + strconv.FormatUint(n, 10)
	joined := Epoch.UnixMilli() + int64(r.intn(fiveYearsMs))
	// Photos per user are heavy-tailed: a Pareto draw with shape 1.2 and
	// scale 2, capped at 2000.
	photos := int(math.Min(2000, 2/math.Pow(1-r.float64(), 1/1.2)-2))
	return User{
		ID:        Key(n),
		Name:      first + " " + last,
		Handle:    handle,
		Email:     handle + "@example.org",
		Bio:       randomWords(&r, 8, 20),
		City:      city[0],
		Country:   city[1],
		BirthYear: 1950 + int(r.intn(59)),
		Joined:    joined,
		LastSeen:  joined + int64(r.intn(fiveYearsMs/5)),
		Status:    randomWords(&r, 2, 8),
		Photos:    photos,
		Avatar:    "https://img.example.org/avatar/" + strconv.FormatUint(mix64(seed^n)&0xffffffffff, 16) + ".jpg",
	}
}

// nameOf returns the name of user number n; reads check it, since updates
// never change it.
func nameOf(seed, n uint64) string {
	r := newRNG(seed ^ mix64(n+1))
	first, last := pick(&r, firstNames), pick(&r, lastNames)
	return first + " " + last
}

// zipfian chooses in [0, items) with item i drawn with probability
// proportional to 1/(i+1)^theta, in constant time per draw, by the method of
// Gray et al. ("Quickly generating billion-record synthetic databases",
// SIGMOD 1994); 0 < theta < 1.
type zipfian struct {
	items             uint64
	theta, alpha, eta float64
	zetan, half       float64
}

func newZipfian(items uint64, theta float64) zipfian {
	zeta := func(n uint64) float64 {
		s := 0.0
		for i := uint64(1); i <= n; i++ {
			s += 1 / math.Pow(float64(i), theta)
		}
		return s
	}
	z := zipfian{items: items, theta: theta, alpha: 1 / (1 - theta), zetan: zeta(items), half: 1 + math.Pow(0.5, theta)}
	z.eta = (1 - math.Pow(2/float64(items), 1-theta)) / (1 - zeta(2)/z.zetan)
	return z
}

func (z *zipfian) next(r *rng) uint64 {
	if z.items < 2 {
		return 0
	}
	u := r.float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.half {
		return 1
	}
	v := uint64(float64(z.items) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(v, z.items-1)
}
