package load

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// ErrBadSpec is wrapped by every error about a load specification a user
// typed (--think, --rate, --phases).
var ErrBadSpec = errors.New("bad load specification")

// Think is a think-time distribution: constant ("2s"), uniform ("0-5s",
// "500ms-2s") or exponential with a mean ("exp:2s"). The zero Think is no
// pause at all.
type Think struct {
	kind byte // 0 none, 'c' constant, 'u' uniform, 'e' exponential
	a, b time.Duration
}

// String prints the think time as it would be typed.
func (t Think) String() string {
	switch t.kind {
	case 'c':
		return t.a.String()
	case 'u':
		return t.a.String() + "-" + t.b.String()
	case 'e':
		return "exp:" + t.a.String()
	}
	return "0s"
}

// IsZero reports whether there is no think time at all.
func (t Think) IsZero() bool { return t.kind == 0 }

// Next draws one think time.
func (t Think) Next(r *rand.Rand) time.Duration {
	switch t.kind {
	case 'c':
		return t.a
	case 'u':
		return t.a + time.Duration(r.Int64N(int64(t.b-t.a)+1))
	case 'e':
		d := r.ExpFloat64() * float64(t.a)
		if d > float64(100*t.a) { // cap the tail so one draw cannot stall a run
			d = float64(100 * t.a)
		}
		return time.Duration(d)
	}
	return 0
}

const maxThink = 24 * time.Hour

// ParseThink parses a think-time specification.
func ParseThink(s string) (Think, error) {
	bad := func(why string) (Think, error) {
		return Think{}, fmt.Errorf("%w: --think %q: %s; allowed: a constant (2s), a uniform range (0-5s, 500ms-2s) or an exponential mean (exp:2s)", ErrBadSpec, s, why)
	}
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return Think{}, nil
	}
	if rest, ok := strings.CutPrefix(s, "exp:"); ok {
		d, err := parseDur(rest)
		if err != nil {
			return bad(err.Error())
		}
		if d <= 0 {
			return bad("the mean must be positive")
		}
		return Think{kind: 'e', a: d}, nil
	}
	if lo, hi, ok := strings.Cut(s, "-"); ok {
		if !hasUnit(lo) && hasUnit(hi) { // "0-5s": the unit of the upper bound applies
			lo += unitOf(hi)
		}
		a, err := parseDur(lo)
		if err != nil {
			return bad("lower bound: " + err.Error())
		}
		b, err := parseDur(hi)
		if err != nil {
			return bad("upper bound: " + err.Error())
		}
		if a < 0 || b < a {
			return bad("the range must satisfy 0 <= low <= high")
		}
		if a == b {
			if a == 0 {
				return Think{}, nil
			}
			return Think{kind: 'c', a: a}, nil
		}
		return Think{kind: 'u', a: a, b: b}, nil
	}
	d, err := parseDur(s)
	if err != nil {
		return bad(err.Error())
	}
	if d < 0 {
		return bad("must not be negative")
	}
	if d == 0 {
		return Think{}, nil
	}
	return Think{kind: 'c', a: d}, nil
}

func parseDur(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 500ms, 2s)", s)
	}
	if d > maxThink {
		return 0, fmt.Errorf("%s is longer than %s", d, maxThink)
	}
	return d, nil
}

func hasUnit(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && (s[len(s)-1] < '0' || s[len(s)-1] > '9')
}

func unitOf(s string) string {
	s = strings.TrimSpace(s)
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') && s[i-1] != '.' {
		i--
	}
	return s[i:]
}

// ParseRate parses an arrival rate such as "5000/s", "300/min", "2/ms" or a
// bare number (per second), returning operations per second.
func ParseRate(s string) (float64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), "/")
	per := 1.0
	switch strings.TrimSpace(unit) {
	case "", "s", "sec":
		per = 1
	case "ms":
		per = 1e-3
	case "m", "min":
		per = 60
	case "h":
		per = 3600
	default:
		return 0, fmt.Errorf("%w: rate %q: unknown unit %q; allowed: /s, /min, /h, /ms (e.g. 5000/s)", ErrBadSpec, s, unit)
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(num), "_", ""), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%w: rate %q: %q is not a number (e.g. 5000/s)", ErrBadSpec, s, num)
	}
	r := f / per
	if r <= 0 || r > 1e9 {
		return 0, fmt.Errorf("%w: rate %q: must be above 0 and at most 1e9 per second", ErrBadSpec, s)
	}
	return r, nil
}

// maxSessionRate bounds a phase's session arrival rate.
const maxSessionRate = 1e7

// Phase is one arrival phase: sessions start at Rate per second for Duration.
type Phase struct {
	Duration time.Duration
	Rate     float64 // sessions per second
}

// String prints the phase as typed: 30s@2/s.
func (p Phase) String() string {
	return p.Duration.String() + "@" + strconv.FormatFloat(p.Rate, 'g', -1, 64) + "/s"
}

// ParsePhases parses a comma-separated list of DURATION@RATE phases, e.g.
// "30s@1/s,30s@2/s,30s@4/s".
func ParsePhases(s string) ([]Phase, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: --phases is empty; expected DURATION@RATE[,...] such as 30s@1/s,30s@2/s", ErrBadSpec)
	}
	var out []Phase
	for i, part := range strings.Split(s, ",") {
		bad := func(why string) ([]Phase, error) {
			return nil, fmt.Errorf("%w: --phases %q: phase %d (%q): %s; expected DURATION@RATE such as 30s@2/s", ErrBadSpec, s, i+1, part, why)
		}
		ds, rs, ok := strings.Cut(strings.TrimSpace(part), "@")
		if !ok {
			return bad("missing '@'")
		}
		d, err := time.ParseDuration(strings.TrimSpace(ds))
		if err != nil {
			return bad(fmt.Sprintf("%q is not a duration", ds))
		}
		if d <= 0 || d > 7*24*time.Hour {
			return bad("the duration must be above 0 and at most a week")
		}
		r, err := ParseRate(rs)
		if err != nil {
			return bad(strings.TrimPrefix(err.Error(), ErrBadSpec.Error()+": "))
		}
		if r > maxSessionRate {
			return bad("at most 1e7 sessions per second")
		}
		out = append(out, Phase{Duration: d, Rate: r})
	}
	if len(out) > 10000 {
		return nil, fmt.Errorf("%w: --phases: %d phases; at most 10000", ErrBadSpec, len(out))
	}
	return out, nil
}
