// Package interrupt turns the process's interrupt signals into a
// cancellation and, on a second signal, an immediate exit.
package interrupt

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Window is how long after the first signal further ones count as the
// same: a signal sent to the whole process group (`timeout -s INT`
// signals its child and then the group; `kill -INT -PGID`) may reach the
// process twice at once, and must not be taken for a second Ctrl-C.
const Window = time.Second

// Notes are what the messages on a signal say comes next: they differ by
// command (a run finishes its results directory, an app server lets its
// requests in flight end).
type Notes struct {
	// Finishing is what the command does after the first signal, as in
	// "interrupted; finishing the results directory".
	Finishing string
	// Quitting is what holds after a second one, as in "streamed files
	// are valid up to the last full interval"; empty says nothing more.
	Quitting string
}

// Watch cancels on the first SIGINT or SIGTERM (the command then does
// what notes.Finishing says) and calls exit on one that comes at least
// Window after it (a second Ctrl-C: quit at once). Messages go to w. It
// returns a function that stops watching.
func Watch(cancel func(), exit func(), w io.Writer, notes Notes) (stop func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		watch(sigs, done, time.Now, cancel, exit, w, notes)
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// watch is Watch's loop over the received signals.
func watch(sigs <-chan os.Signal, done <-chan struct{}, now func() time.Time, cancel func(), exit func(), w io.Writer, notes Notes) {
	var first time.Time
	for {
		select {
		case <-done:
			return
		case <-sigs:
		}
		switch t := now(); {
		case first.IsZero():
			first = t
			fmt.Fprintf(w, "\nscalelab: interrupted; %s (press Ctrl-C again to quit at once)\n", notes.Finishing)
			cancel()
		case t.Sub(first) < Window:
			// the same signal delivered to the process and its group
		default:
			if notes.Quitting != "" {
				fmt.Fprintf(w, "scalelab: quit at once; %s\n", notes.Quitting)
			} else {
				fmt.Fprintln(w, "scalelab: quit at once")
			}
			exit()
			return
		}
	}
}
