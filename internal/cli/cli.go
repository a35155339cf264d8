// Package cli implements the scalelab command line: one file per
// subcommand, and the mapping from errors to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/setting"
)

// Exit codes, as documented in the README (defined in results,
// since run.json records them too).
const (
	ExitOK          = results.ExitOK
	ExitCheckFailed = results.ExitCheckFailed
	ExitUsage       = results.ExitUsage
	ExitInterrupted = results.ExitInterrupted
	ExitUnfinished  = results.ExitUnfinished
	ExitInternal    = results.ExitInternal
)

// ExitError carries an exit code with an error.
type ExitError = results.ExitError

var (
	usageErr    = results.UsageErr
	withCode    = results.WithCode
	errReported = results.ErrReported
)

// ExitCode maps an error to the process exit code.
func ExitCode(err error) int { return results.ExitCode(err) }

// Version returns the build's version.
func Version() string { return results.BuildVersion() }

const usage = `scalelab: measure how an application's data backend scales

Usage:
  scalelab run SCENARIO [flags]   run a scenario against an engine, write a results directory
  scalelab list [WHAT [NAME]]     list scenarios, engines, load models and settings (WHAT:
                                  scenarios, engines, models, settings; NAME narrows settings to
                                  one engine or scenario)
  scalelab cluster up|status|down|list
                                  start, inspect and stop local multi-node clusters
  scalelab experiment run|knee|validate|show FILE
                                  run a matrix with repeats and statistics, or a knee search
  scalelab check DIR --slo 'p95<1s'
                                  exit 1 when a run or experiment misses an SLO (a CI gate)
  scalelab report DIR [DIR...]    rebuild a run's report.html (repairing a crashed run), or
                                  compare runs
  scalelab audit DIR              read back the writes of a run (one whose process died, too)
  scalelab serve SCENARIO [flags] run a scenario's backend (records, mhealth) as an HTTP app server
  scalelab merge DIR... --out DIR add the segments of a divided test (run --segment I/N) into
                                  one result
  scalelab kube job|setup [flags] -- SCENARIO [run flags]
                                  render the Kubernetes Jobs of a divided test (YAML on stdout)
  scalelab version                print the version
  scalelab help [COMMAND]         print help

Every command answers --help ('scalelab run --help' lists the run flags).
Exit codes: 0 ok, 1 a check failed, 2 bad usage, 3 interrupted, 4 the run could not finish,
70 internal error.
`

// commands are the subcommands, in the order the usage lists them.
var commands = []string{"run", "list", "cluster", "experiment", "check", "report", "audit", "serve", "merge", "kube", "version", "help"}

// isCommand reports whether name is a subcommand.
func isCommand(name string) bool {
	for _, c := range commands {
		if c == name {
			return true
		}
	}
	return false
}

// Main runs the command line and returns the exit code; errors are printed
// to stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := Run(ctx, args, stdout, stderr)
	if err != nil {
		code := ExitCode(err)
		if !errors.Is(err, errReported) {
			prefix := "scalelab: "
			if code == ExitInternal {
				prefix = "scalelab: internal error: "
			}
			fmt.Fprintln(stderr, prefix+err.Error())
		}
		return code
	}
	return ExitOK
}

// Run dispatches to a subcommand.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageErr("no command given")
	}
	cmd, rest := args[0], args[1:]
	if wantsHelp(rest) && isCommand(cmd) {
		printHelp(stdout, cmd, rest)
		return nil
	}
	switch cmd {
	case "run":
		return runCmd(ctx, rest, stdout, stderr)
	case "list":
		return listCmd(rest, stdout)
	case "report":
		return reportCmd(rest, stdout, stderr)
	case "audit":
		return auditCmd(ctx, rest, stdout, stderr)
	case "serve":
		return serveCmd(ctx, rest, stdout, stderr)
	case "merge":
		return mergeCmd(rest, stdout, stderr)
	case "kube":
		return kubeCmd(rest, stdout, stderr)
	case "cluster":
		return clusterCmd(ctx, rest, stdout, stderr)
	case "experiment":
		return experimentCmd(ctx, rest, stdout, stderr)
	case "check":
		return checkCmd(rest, stdout, stderr)
	case runner.ChildCommand: // an experiment's segment process; not listed
		return runner.RunChild(ctx, os.Stdin, stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "scalelab", Version())
		return nil
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && !isCommand(rest[0]) {
			return usageErr("help: unknown command %q; commands: %s", rest[0], strings.Join(commands, ", "))
		}
		if len(rest) > 0 {
			printHelp(stdout, rest[0], rest[1:])
			return nil
		}
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmds := commands
	msg := fmt.Sprintf("unknown command %q; commands: %s", cmd, strings.Join(cmds, ", "))
	if n := setting.Nearest(cmd, cmds); n != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", n)
	}
	return usageErr("%s", msg)
}
