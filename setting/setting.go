// Package setting declares typed, documented settings (engine.key=value and
// scenario.key=value), parses user values for them and reports bad input with
// the key, the value, what is allowed and the nearest valid key.
package setting

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind is the type of a setting's value.
type Kind int

// The kinds of setting values.
const (
	String Kind = iota
	Int
	Float
	Bool
	Duration
	Enum
	Size
)

// String names the kind as `scalelab list` prints it.
func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Int:
		return "int"
	case Float:
		return "float"
	case Bool:
		return "bool"
	case Duration:
		return "duration"
	case Enum:
		return "enum"
	case Size:
		return "size"
	}
	return "unknown"
}

// Spec describes one setting: its full key (prefix.name), type, default,
// allowed values or range, and a one-line description.
type Spec struct {
	Key         string   // full key, e.g. "sqlite.journal_mode"
	Kind        Kind     // value type
	Default     string   // default value, as a user would type it
	Description string   // one line
	Allowed     []string // for Enum: the allowed values
	Min, Max    float64  // for Int, Float, Duration (in seconds) and Size: inclusive range; ignored when Min == Max == 0
	// Check optionally validates a parsed value beyond kind and range; it
	// returns a message saying what is allowed.
	Check func(v Value) error
}

// Value is a parsed setting value.
type Value struct {
	Raw string
	i   int64
	f   float64
	b   bool
	d   time.Duration
}

// Int returns the value of an Int or Size setting.
func (v Value) Int() int64 { return v.i }

// Float returns the value of a Float setting (or Int, converted).
func (v Value) Float() float64 { return v.f }

// Bool returns the value of a Bool setting.
func (v Value) Bool() bool { return v.b }

// Duration returns the value of a Duration setting.
func (v Value) Duration() time.Duration { return v.d }

// String returns the value as typed (for String and Enum settings).
func (v Value) String() string { return v.Raw }

// AllowedText describes what values the spec accepts, for help and errors.
func (s Spec) AllowedText() string {
	switch s.Kind {
	case Enum:
		return strings.Join(s.Allowed, "|")
	case Bool:
		return "true|false"
	case Int, Float, Size:
		if s.Min == 0 && s.Max == 0 {
			return s.Kind.String()
		}
		return fmt.Sprintf("%s in [%s, %s]", s.Kind, trimFloat(s.Min), trimFloat(s.Max))
	case Duration:
		if s.Min == 0 && s.Max == 0 {
			return "duration (e.g. 500ms, 2s)"
		}
		return fmt.Sprintf("duration in [%s, %s]", secs(s.Min), secs(s.Max))
	}
	return "string"
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func secs(f float64) string { return time.Duration(f * float64(time.Second)).String() }

// ErrBadValue is wrapped by every error about a value that does not parse or
// is out of range.
var ErrBadValue = errors.New("bad setting value")

// ErrUnknownKey is wrapped by errors about keys that no spec declares.
var ErrUnknownKey = errors.New("unknown setting")

// Parse parses raw for this spec.
func (s Spec) Parse(raw string) (Value, error) {
	v := Value{Raw: raw}
	bad := func(why string) (Value, error) {
		return Value{}, fmt.Errorf("%w: %s=%q: %s; allowed: %s", ErrBadValue, s.Key, raw, why, s.AllowedText())
	}
	switch s.Kind {
	case String:
	case Enum:
		found := false
		for _, a := range s.Allowed {
			if raw == a {
				found = true
				break
			}
		}
		if !found {
			why := "not one of the allowed values"
			if n := Nearest(raw, s.Allowed); n != "" {
				why += fmt.Sprintf(" (did you mean %q?)", n)
			}
			return bad(why)
		}
	case Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			switch strings.ToLower(raw) {
			case "on", "yes":
				b = true
			case "off", "no":
				b = false
			default:
				return bad("not a boolean")
			}
		}
		v.b = b
	case Int:
		i, err := strconv.ParseInt(strings.ReplaceAll(raw, "_", ""), 10, 64)
		if err != nil {
			return bad("not an integer")
		}
		v.i, v.f = i, float64(i)
	case Size:
		i, err := ParseSize(raw)
		if err != nil {
			return bad(err.Error())
		}
		v.i, v.f = i, float64(i)
	case Float:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return bad("not a number")
		}
		v.f = f
	case Duration:
		d, err := time.ParseDuration(raw)
		if err != nil {
			return bad("not a duration")
		}
		v.d, v.f = d, d.Seconds()
	}
	if s.Kind == Int || s.Kind == Float || s.Kind == Size || s.Kind == Duration {
		if !(s.Min == 0 && s.Max == 0) && (v.f < s.Min || v.f > s.Max) {
			return bad("out of range")
		}
	}
	if s.Check != nil {
		if err := s.Check(v); err != nil {
			return Value{}, fmt.Errorf("%w: %s=%q: %v", ErrBadValue, s.Key, raw, err)
		}
	}
	return v, nil
}

// ParseSize parses a byte count such as 4096, 64k, 16MiB or 1GB (k = 1024).
func ParseSize(raw string) (int64, error) {
	s := strings.TrimSpace(strings.ToLower(raw))
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(s, suf.s) {
			s, mult = strings.TrimSuffix(s, suf.s), suf.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("not a size (e.g. 4096, 64k, 16MiB)")
	}
	if n > math.MaxInt64/mult {
		return 0, errors.New("size too large")
	}
	return n * mult, nil
}

// Set is a resolved group of settings: every declared key has a value (the
// default unless the user gave one).
type Set struct {
	specs  map[string]Spec
	values map[string]Value
	given  map[string]bool
}

// NewSet makes a set of the given specs, all at their defaults. It panics if
// a default does not parse: that is a programming error.
func NewSet(specs ...Spec) *Set {
	s := &Set{specs: map[string]Spec{}, values: map[string]Value{}, given: map[string]bool{}}
	for _, sp := range specs {
		if _, dup := s.specs[sp.Key]; dup {
			panic("setting: duplicate key " + sp.Key)
		}
		v, err := sp.Parse(sp.Default)
		if err != nil {
			panic(fmt.Sprintf("setting: default of %s: %v", sp.Key, err))
		}
		s.specs[sp.Key] = sp
		s.values[sp.Key] = v
	}
	return s
}

// Apply parses "key=value" and sets it. Errors name the key and value, what
// is allowed, and the nearest valid key.
func (s *Set) Apply(assignment string) error {
	key, raw, ok := strings.Cut(assignment, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return fmt.Errorf("%w: %q is not key=value (e.g. ycsb.workload=c)", ErrBadValue, assignment)
	}
	return s.SetValue(key, raw)
}

// SetValue parses raw for key and sets it.
func (s *Set) SetValue(key, raw string) error {
	sp, ok := s.specs[key]
	if !ok {
		msg := fmt.Sprintf("%v %q", ErrUnknownKey, key)
		if n := Nearest(key, s.Keys()); n != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", n)
		}
		msg += "; `scalelab list` prints every setting"
		return unknownKeyError{msg}
	}
	v, err := sp.Parse(raw)
	if err != nil {
		return err
	}
	s.values[key] = v
	s.given[key] = true
	return nil
}

type unknownKeyError struct{ msg string }

func (e unknownKeyError) Error() string { return e.msg }
func (e unknownKeyError) Unwrap() error { return ErrUnknownKey }

// Has reports whether key is declared in the set.
func (s *Set) Has(key string) bool { _, ok := s.specs[key]; return ok }

// Get returns the value of key; it panics for an undeclared key, which is a
// programming error.
func (s *Set) Get(key string) Value {
	v, ok := s.values[key]
	if !ok {
		panic("setting: undeclared key " + key)
	}
	return v
}

// Getter returns a lookup of keys in set that falls back to the defaults
// of specs for a key set does not declare (set may be nil): how an engine
// reads its options from a set that may hold only some of its keys.
func Getter(set *Set, specs []Spec) func(key string) Value {
	defaults := NewSet(specs...)
	return func(key string) Value {
		if set != nil && set.Has(key) {
			return set.Get(key)
		}
		return defaults.Get(key)
	}
}

// Given reports whether the user set key explicitly.
func (s *Set) Given(key string) bool { return s.given[key] }

// Keys returns the declared keys, sorted.
func (s *Set) Keys() []string {
	return slices.Sorted(maps.Keys(s.specs))
}

// Spec returns the spec of key.
func (s *Set) Spec(key string) (Spec, bool) { sp, ok := s.specs[key]; return sp, ok }

// Map returns every key with its value as typed, for run.json.
func (s *Set) Map() map[string]string {
	m := make(map[string]string, len(s.values))
	for k, v := range s.values {
		m[k] = v.Raw
	}
	return m
}

// Changed returns the keys whose values differ from their defaults, sorted.
func (s *Set) Changed() []string {
	var out []string
	for _, k := range s.Keys() {
		if s.values[k].Raw != s.specs[k].Default {
			out = append(out, k)
		}
	}
	return out
}

// Nearest returns the candidate closest to name by edit distance among
// those Near it, or "" when none is: the one rule of every "did you mean"
// of scalelab (setting keys and values, flags, scenarios, engines).
func Nearest(name string, candidates []string) string {
	best, bestD := "", math.MaxInt
	for _, c := range candidates {
		if d := Distance(name, c); d < bestD && Near(name, c) {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	// A candidate sharing the part after the last dot is a good guess too
	// (e.g. "ycsb.workload" for "workload").
	if tail := name[strings.LastIndex(name, ".")+1:]; tail != "" {
		for _, c := range candidates {
			if strings.HasSuffix(c, "."+tail) {
				return c
			}
		}
	}
	return ""
}

// Near reports whether candidate is a plausible typo of name, letter case
// ignored: at most one edit (a letter added, dropped, changed, or two
// swapped) per three letters of the longer word, or one word a prefix of
// the other of at least three letters. "g" is near no other one-letter
// value; "stric" is near "strict", "bars" near "bar", "ycbs" near "ycsb".
func Near(name, candidate string) bool {
	a, b := strings.ToLower(name), strings.ToLower(candidate)
	if a == "" || b == "" {
		return false
	}
	short, long := a, b
	if utf8.RuneCountInString(short) > utf8.RuneCountInString(long) {
		short, long = long, short
	}
	if utf8.RuneCountInString(short) >= 3 && strings.HasPrefix(long, short) {
		return true
	}
	return 3*distance(a, b) <= utf8.RuneCountInString(long)
}

// Distance is the edit distance of a and b, letter case ignored: how far
// a user's word is from a known name.
func Distance(a, b string) int { return distance(strings.ToLower(a), strings.ToLower(b)) }

// distance is the optimal string alignment distance of a and b: the
// Levenshtein distance with a swap of two neighbouring letters counted as
// one edit.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
