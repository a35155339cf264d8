package cli

import (
	"context"
	"os"

	"github.com/scalelab/scalelab/internal/interrupt"
)

// Exec runs the command line with the process's arguments and exits with
// its code: the first Ctrl-C or SIGTERM cancels the command (which
// finishes its results directory, or lets an app server's in-flight
// requests end), a second one (a second or more later: one signal sent to
// the whole process group may arrive twice) quits at once.
func Exec() {
	ctx, cancel := context.WithCancel(context.Background())
	stop := interrupt.Watch(cancel, func() { os.Exit(ExitInterrupted) }, os.Stderr)
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	cancel()
	os.Exit(code)
}
