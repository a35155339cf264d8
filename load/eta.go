package load

import (
	"fmt"
	"strconv"
	"time"
)

// Remaining estimates how long a run bounded by opt has left after elapsed
// with done operations started: the rest of the duration, or the
// operations left at the mean rate so far, whichever ends first. ok is
// false while nothing is known (an operation budget before any operation).
func Remaining(opt Options, elapsed time.Duration, done int64) (time.Duration, bool) {
	var rem time.Duration
	ok := false
	if opt.Duration > 0 {
		rem, ok = max(opt.Duration-elapsed, 0), true
	}
	if opt.Ops > 0 && done > 0 && elapsed > 0 {
		left := max(opt.Ops-done, 0)
		byOps := time.Duration(float64(left) / float64(done) * float64(elapsed))
		if !ok || byOps < rem {
			rem, ok = byOps, true
		}
	}
	return rem, ok
}

// LoopsRemaining estimates how long a threads run has left after elapsed
// with done of its total loops finished, at the mean pace so far. ok is
// false before the first loop ends.
func LoopsRemaining(elapsed time.Duration, done, total int64) (time.Duration, bool) {
	if done <= 0 || total <= 0 || elapsed <= 0 {
		return 0, false
	}
	return time.Duration(float64(max(total-done, 0)) / float64(done) * float64(elapsed)), true
}

// Bound says what ends a run: "10s", "250,000 operations", or "250,000
// operations or 10m0s, whichever comes first".
func Bound(opt Options) string {
	switch {
	case opt.Ops > 0 && opt.Duration > 0:
		return fmt.Sprintf("%s operations or %s, whichever comes first", Count(opt.Ops), opt.Duration)
	case opt.Ops > 0:
		return Count(opt.Ops) + " operations"
	}
	return opt.Duration.String()
}

// OpsEstimate is what a run bounded by operations prints once its rate is
// known: "250,000 operations, about 12 minutes at the current rate (340
// ops/s)". ok is false before any operation.
func OpsEstimate(ops int64, elapsed time.Duration, done int64) (string, bool) {
	if ops <= 0 || done <= 0 || elapsed <= 0 {
		return "", false
	}
	rate := float64(done) / elapsed.Seconds()
	total := time.Duration(float64(ops) / rate * float64(time.Second))
	return fmt.Sprintf("%s operations, about %s at the current rate (%s ops/s)", Count(ops), About(total), Count(int64(rate))), true
}

// About words a duration roughly: "40 seconds", "12 minutes", "3.5 hours".
func About(d time.Duration) string {
	switch {
	case d < 90*time.Second:
		return fmt.Sprintf("%d seconds", int(d.Round(time.Second).Seconds()))
	case d < 90*time.Minute:
		return fmt.Sprintf("%d minutes", int(d.Round(time.Minute).Minutes()))
	}
	return strconv.FormatFloat(d.Hours(), 'f', 1, 64) + " hours"
}

// Count formats n with thousands separators: 250,000.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
