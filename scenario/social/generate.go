package social

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"math"
	"strconv"
	"strings"
)

// pick returns a uniformly chosen element of list.
func pick(r *kit.RNG, list []string) string { return list[r.Intn(uint64(len(list)))] }

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
func appendWords(b *strings.Builder, r *kit.RNG, n int) {
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(pick(r, words))
	}
}

// randomWords returns between lo and hi random words.
func randomWords(r *kit.RNG, lo, hi int) string {
	var b strings.Builder
	appendWords(&b, r, lo+int(r.Intn(uint64(hi-lo+1))))
	return b.String()
}

// fiveYearsMs is the span of generated sign-up times.
const fiveYearsMs = 5 * 365 * 24 * 3600 * 1000

// NewUser returns user number n of the data set generated from seed: the
// same seed and number always give the same user, whichever worker makes
// it.
func NewUser(seed, n uint64) User {
	r := kit.NewRNG(seed ^ kit.Mix64(n+1))
	first, last := pick(&r, firstNames), pick(&r, lastNames)
	city := cities[r.Intn(uint64(len(cities)))]
	handle := strings.ToLower(first) + "." + strings.ToLower(last) + strconv.FormatUint(n, 10)
	joined := Epoch.UnixMilli() + int64(r.Intn(fiveYearsMs))
	// Photos per user are heavy-tailed: a Pareto draw with shape 1.2 and
	// scale 2, capped at 2000.
	photos := int(math.Min(2000, 2/math.Pow(1-r.Float64(), 1/1.2)-2))
	return User{
		ID:        Key(n),
		Name:      first + " " + last,
		Handle:    handle,
		Email:     handle + "@example.org",
		Bio:       randomWords(&r, 8, 20),
		City:      city[0],
		Country:   city[1],
		BirthYear: 1950 + int(r.Intn(59)),
		Joined:    joined,
		LastSeen:  joined + int64(r.Intn(fiveYearsMs/5)),
		Status:    randomWords(&r, 2, 8),
		Photos:    photos,
		Avatar:    "https://img.example.org/avatar/" + strconv.FormatUint(kit.Mix64(seed^n)&0xffffffffff, 16) + ".jpg",
	}
}

// nameOf returns the name of user number n; reads check it, since updates
// never change it.
func nameOf(seed, n uint64) string {
	r := kit.NewRNG(seed ^ kit.Mix64(n+1))
	first, last := pick(&r, firstNames), pick(&r, lastNames)
	return first + " " + last
}
