package cli

import (
	"context"
	"os"
	"strings"

	"github.com/scalelab/scalelab/internal/interrupt"
	"github.com/scalelab/scalelab/runner"
)

// Exec runs the command line with the process's arguments and exits with
// its code: the first Ctrl-C or SIGTERM cancels the command (which
// finishes its results directory, or lets an app server's in-flight
// requests end), a second one (a second or more later: one signal sent to
// the whole process group may arrive twice) quits at once.
func Exec() {
	ctx, cancel := context.WithCancel(context.Background())
	stop := interrupt.Watch(cancel, func() { os.Exit(ExitInterrupted) }, os.Stderr, interruptNotes(os.Args[1:]))
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	cancel()
	os.Exit(code)
}

// interruptNotes returns what the messages on Ctrl-C say for the command
// args name: the commands that write a results directory finish it, an
// app server lets its requests in flight end, the others stop.
func interruptNotes(args []string) interrupt.Notes {
	name := ""
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			name = a
			break
		}
	}
	switch name {
	case "run", "experiment", "study", runner.ChildCommand:
		return interrupt.Notes{Finishing: "finishing the results directory",
			Quitting: "streamed files are valid up to the last full interval"}
	case "serve":
		return interrupt.Notes{Finishing: "letting the requests in flight end"}
	default:
		return interrupt.Notes{Finishing: "stopping"}
	}
}
