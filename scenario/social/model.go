package social

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// User is one document of the users collection: a photo-sharing app's
// profile. The study benchmarked only this collection (`_id`, `name` and
// profile fields); the fields beyond those two are chosen to resemble a
// social profile and give a document of about 400 bytes:
//
//	_id         "u" + 10-digit user number (ordered: a scan by _id walks user numbers)
//	name        "First Last", never updated (reads check it against the generator)
//	handle      lower-case first.last + number, unique
//	email       handle@example.org
//	bio         8 to 20 words
//	city        one of 40 cities
//	country     the city's country
//	birth_year  1950-2008
//	joined      sign-up time, Unix milliseconds in 2012-2016
//	last_seen   last activity, Unix milliseconds; written by updates
//	status      a short status line (2 to 8 words); written by updates
//	photos      photos uploaded, 0-2000 (heavy-tailed)
//	avatar      an image URL
//
// Engines store the document without `_id`, which is the key (the row's
// primary key, the search document's id).
type User struct {
	ID        string `json:"-"`
	Name      string `json:"name"`
	Handle    string `json:"handle"`
	Email     string `json:"email"`
	Bio       string `json:"bio"`
	City      string `json:"city"`
	Country   string `json:"country"`
	BirthYear int    `json:"birth_year"`
	Joined    int64  `json:"joined"`
	LastSeen  int64  `json:"last_seen"`
	Status    string `json:"status"`
	Photos    int    `json:"photos"`
	Avatar    string `json:"avatar"`
}

// keyDigits is the zero-padded width of user numbers in keys, so that keys
// sort like user numbers.
const keyDigits = 10

// Key returns the `_id` of user number n: "u" followed by n zero-padded to
// 10 digits.
func Key(n uint64) string { return string(appendKey(nil, n)) }

func appendKey(dst []byte, n uint64) []byte {
	dst = append(dst, 'u')
	var tmp [20]byte
	d := strconv.AppendUint(tmp[:0], n, 10)
	for i := len(d); i < keyDigits; i++ {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

// KeyNumber parses a key made by Key; ok is false for any other string.
func KeyNumber(key string) (n uint64, ok bool) {
	if len(key) != keyDigits+1 || key[0] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(key[1:], 10, 64)
	return n, err == nil
}

// Doc encodes the user as a JSON document without `_id`.
func (u *User) Doc() []byte {
	b, err := json.Marshal(u)
	if err != nil { // a struct of strings and numbers always encodes
		panic(fmt.Sprintf("social: encode user: %v", err))
	}
	return b
}

// Epoch is the start of the generated time line: joined times fall in the
// five years after it, last_seen times after those.
var Epoch = time.Date(2012, 1, 1, 0, 0, 0, 0, time.UTC)
