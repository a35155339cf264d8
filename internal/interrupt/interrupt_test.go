package interrupt

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// The first signal cancels; one within Window of it (a signal sent to the
// process group, delivered twice) is the same; one after Window quits.
func TestWatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		after   []time.Duration // arrival of each signal after the first (one that quits is the last)
		cancels int
		exits   int
	}{
		{"one signal", nil, 1, 0},
		{"a group delivery: twice at once", []time.Duration{time.Millisecond}, 1, 0},
		{"three deliveries within the window", []time.Duration{0, Window / 2}, 1, 0},
		{"a second Ctrl-C", []time.Duration{2 * Window}, 1, 1},
		{"a group delivery, then a second Ctrl-C", []time.Duration{time.Millisecond, Window + time.Millisecond}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sigs := make(chan os.Signal)
			done := make(chan struct{})
			t0 := time.Unix(1000, 0)
			clock := make(chan time.Time, 1)
			var cancels, exits int
			var out strings.Builder
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				watch(sigs, done, func() time.Time { return <-clock }, func() { cancels++ }, func() { exits++ }, &out, Notes{Finishing: "finishing the work", Quitting: "the work is partial"})
			}()
			for _, at := range append([]time.Duration{0}, tc.after...) {
				clock <- t0.Add(at)
				sigs <- os.Interrupt
			}
			close(done)
			<-ended
			if cancels != tc.cancels || exits != tc.exits {
				t.Fatalf("%d cancels, %d exits; want %d, %d (output %q)", cancels, exits, tc.cancels, tc.exits, out.String())
			}
			want := []string{"scalelab: interrupted; finishing the work (press Ctrl-C again to quit at once)"}
			if tc.exits > 0 {
				want = append(want, "scalelab: quit at once; the work is partial")
			}
			if got := strings.TrimSpace(out.String()); got != strings.Join(want, "\n") {
				t.Errorf("output %q; want the lines %q", out.String(), want)
			}
		})
	}
}

// Watch stops cleanly.
func TestWatchStop(t *testing.T) {
	t.Parallel()
	stop := Watch(func() {}, func() { t.Error("exit") }, io.Discard, Notes{Finishing: "stopping"})
	stop()
}
