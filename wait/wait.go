// Package wait bounds and announces scalelab's waits: for an index to be
// built, a cluster to be healthy, a replica to catch up, a server to
// answer. A wait polls a check (or runs one blocking call) until it holds,
// says on the context's output what it waits for once it has taken a few
// seconds and again periodically ("waiting for index logs_ts_idx on node
// 127.0.0.3: building, 40 s (up to 5m0s, cassandra.index_wait)"), and ends
// at its bound with a *TimeoutError naming what did not become ready, its
// last state, the setting that bounds it and what to try.
package wait

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Default timings of the announcements (For.Announce and For.Repeat).
const (
	DefaultAnnounce = 5 * time.Second  // first message after this long
	DefaultRepeat   = 15 * time.Second // then one every this long
	DefaultEvery    = 200 * time.Millisecond
)

type outputKey struct{}

// WithOutput returns ctx carrying w as the writer of the waits' messages
// (the run's or the command's stderr).
func WithOutput(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, outputKey{}, w)
}

// Output returns the writer WithOutput put in ctx, or os.Stderr.
func Output(ctx context.Context) io.Writer {
	if w, ok := ctx.Value(outputKey{}).(io.Writer); ok && w != nil {
		return w
	}
	return os.Stderr
}

// For describes one wait.
type For struct {
	// What is waited for, naming the node when there is one: "index
	// logs_ts_idx on node 127.0.0.3".
	What string
	// Bound is how long to wait at most; 0 leaves only ctx's deadline.
	Bound time.Duration
	// Setting names what sets Bound ("cassandra.index_wait", "--timeout"),
	// for the messages and the error.
	Setting string
	// Hint is what to try when the bound passes (one short sentence).
	Hint string
	// Every is the pause between checks (DefaultEvery when 0).
	Every time.Duration
	// Announce and Repeat override DefaultAnnounce and DefaultRepeat.
	Announce, Repeat time.Duration
}

// TimeoutError is the error of a wait that reached its bound.
type TimeoutError struct {
	What    string
	State   string // the check's last word on it ("building"), or ""
	Waited  time.Duration
	Bound   time.Duration
	Setting string
	Hint    string
	Last    error // the last error of the check, if it failed meanwhile
}

// Error says what was not ready, for how long, what bounds the wait and
// what to try.
func (e *TimeoutError) Error() string {
	s := fmt.Sprintf("%s: not ready after %s", e.What, round(e.Waited))
	if e.State != "" {
		s += " (" + e.State + ")"
	}
	if e.Last != nil {
		s += fmt.Sprintf(" (last error: %v)", e.Last)
	}
	if e.Setting != "" {
		s += fmt.Sprintf("; the wait is bounded by %s (%s)", e.Setting, round(e.Bound))
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap makes a TimeoutError a context.DeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// Check tells whether what is waited for is ready; state is a word on how
// far it is ("building", "yellow, 2 of 3 nodes"). An error ends the wait
// with that error unless the check wraps it in Retry.
type Check func(ctx context.Context) (ready bool, state string, err error)

type retryErr struct{ err error }

func (r retryErr) Error() string { return r.err.Error() }
func (r retryErr) Unwrap() error { return r.err }

// Retry marks an error of a Check as passing: the wait goes on, and the
// error is reported if the bound passes.
func Retry(err error) error { return retryErr{err} }

// Poll calls check every f.Every until it reports ready, fails, ctx ends
// or the bound passes.
func (f For) Poll(ctx context.Context, check Check) error {
	every := f.Every
	if every <= 0 {
		every = DefaultEvery
	}
	ctx, cancel, bounded := f.bound(ctx)
	defer cancel()
	an := f.announcer(ctx)
	var state string
	var last error
	for {
		ready, st, err := check(ctx)
		if ready && err == nil {
			return nil
		}
		if err != nil {
			var r retryErr
			if !errors.As(err, &r) {
				if bounded() && ctx.Err() != nil {
					return f.timeout(an.start, state, err)
				}
				return f.failed(err)
			}
			last = r.err
		} else {
			last = nil
		}
		if st != "" {
			state = st
		}
		an.tick(state)
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			if bounded() {
				return f.timeout(an.start, state, last)
			}
			return fmt.Errorf("waiting for %s: %w", f.What, ctx.Err())
		case <-t.C:
		}
	}
}

// Do runs a blocking call, announcing it as Poll does while it runs, with
// ctx bounded by f.Bound; fn must return when its ctx ends.
func (f For) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel, bounded := f.bound(ctx)
	defer cancel()
	an := f.announcer(ctx)
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if err != nil && bounded() && ctx.Err() != nil {
				return f.timeout(an.start, "", err)
			}
			return err
		case <-t.C:
			an.tick("")
		}
	}
}

// bound derives the bounded ctx; bounded reports whether it was the bound
// (not the parent) that ended it.
// A zero f.Bound becomes what is left of ctx's deadline, if it has one.
func (f *For) bound(ctx context.Context) (context.Context, context.CancelFunc, func() bool) {
	parent := ctx
	if f.Bound <= 0 {
		dl, has := ctx.Deadline()
		if has {
			f.Bound = time.Until(dl)
		}
		return ctx, func() {}, func() bool { return has && errors.Is(ctx.Err(), context.DeadlineExceeded) }
	}
	ctx, cancel := context.WithTimeout(ctx, f.Bound)
	return ctx, cancel, func() bool {
		return errors.Is(ctx.Err(), context.DeadlineExceeded) && (parent.Err() == nil || errors.Is(parent.Err(), context.DeadlineExceeded))
	}
}

// failed is the error of a check that failed: what was waited for, the
// error, and what to try.
func (f For) failed(err error) error {
	if f.Hint != "" {
		return fmt.Errorf("waiting for %s: %w; %s", f.What, err, f.Hint)
	}
	return fmt.Errorf("waiting for %s: %w", f.What, err)
}

func (f For) timeout(start time.Time, state string, last error) error {
	return &TimeoutError{What: f.What, State: state, Waited: time.Since(start), Bound: f.Bound,
		Setting: f.Setting, Hint: f.Hint, Last: last}
}

// announcer prints "waiting for ..." once f.Announce has passed and then
// every f.Repeat.
type announcer struct {
	f     For
	w     io.Writer
	start time.Time
	next  time.Time
	mu    sync.Mutex
}

func (f For) announcer(ctx context.Context) *announcer {
	a := &announcer{f: f, w: Output(ctx), start: time.Now()}
	first := f.Announce
	if first <= 0 {
		first = DefaultAnnounce
	}
	a.next = a.start.Add(first)
	return a
}

func (a *announcer) tick(state string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	if now.Before(a.next) {
		return
	}
	repeat := a.f.Repeat
	if repeat <= 0 {
		repeat = DefaultRepeat
	}
	a.next = now.Add(repeat)
	msg := "waiting for " + a.f.What
	if state != "" {
		msg += ": " + state
	}
	msg += fmt.Sprintf(", %d s", int(now.Sub(a.start).Seconds()))
	if a.f.Bound > 0 {
		msg += " (up to " + round(a.f.Bound).String()
		if a.f.Setting != "" {
			msg += ", " + a.f.Setting
		}
		msg += ")"
	}
	fmt.Fprintln(a.w, msg)
}

func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}
