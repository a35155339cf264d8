package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Exec runs the command line with the process's arguments and exits with
// its code: the first Ctrl-C or SIGTERM cancels the command (which
// finishes its results directory, or lets an app server's in-flight
// requests end), a second quits at once.
func Exec() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Fprintln(os.Stderr, "\nscalelab: interrupted; finishing the results directory (press Ctrl-C again to quit at once)")
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "scalelab: quit at once; streamed files are valid up to the last full interval")
		os.Exit(ExitInterrupted)
	}()
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}
