// Command scalelab measures how an application's data backend scales: it
// runs a scenario against a data store under a load model and writes a
// self-describing results directory. See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/scalelab/scalelab/internal/cli"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Fprintln(os.Stderr, "\nscalelab: interrupted; finishing the results directory (press Ctrl-C again to quit at once)")
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "scalelab: quit at once; streamed files are valid up to the last full interval")
		os.Exit(cli.ExitInterrupted)
	}()
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}
