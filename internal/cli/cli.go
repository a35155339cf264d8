// Package cli implements the scalelab command line: one file per
// subcommand, and the mapping from errors to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/scalelab/scalelab/setting"
)

// Exit codes, as documented in the GUIDE and README.
const (
	ExitOK          = 0  // the run finished and every check passed
	ExitCheckFailed = 1  // an SLO, threshold or correctness check failed
	ExitUsage       = 2  // bad usage or configuration
	ExitInterrupted = 3  // interrupted (Ctrl-C, SIGTERM)
	ExitUnfinished  = 4  // the run could not finish (engine unreachable, ...)
	ExitInternal    = 70 // a bug in scalelab
)

// ExitError carries an exit code with an error message.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

func usageErr(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// ExitCode maps an error to the process exit code. Errors that carry no
// code are internal errors: every failure a user can cause has a code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if errors.Is(err, setting.ErrBadValue) || errors.Is(err, setting.ErrUnknownKey) {
		return ExitUsage
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	return ExitInternal
}

// Version returns the build's version: the module version or VCS revision.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "dev-" + rev + dirty
	}
	if v == "" || v == "(devel)" {
		return "dev"
	}
	return v
}

const usage = `scalelab: measure how an application's data backend scales

Usage:
  scalelab run SCENARIO [flags]   run a scenario against an engine, write a results directory
  scalelab list                   list scenarios, engines, load models and every setting
  scalelab cluster up|status|down|list   start, inspect and stop local multi-node clusters
  scalelab version                print the version
  scalelab help [COMMAND]         print help

Run 'scalelab help run' for the run flags. Exit codes: 0 ok, 1 a check failed,
2 bad usage, 3 interrupted, 4 the run could not finish, 70 internal error.
`

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

// errReported marks an error whose message was already shown.
var errReported = errors.New("reported")

// Run dispatches to a subcommand.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageErr("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return runCmd(ctx, rest, stdout, stderr)
	case "list":
		return listCmd(rest, stdout)
	case "cluster":
		return clusterCmd(ctx, rest, stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "scalelab", Version())
		return nil
	case "help", "-h", "--help":
		if len(rest) > 0 && rest[0] == "run" {
			fs, _ := newRunFlags()
			fs.SetOutput(stdout)
			fmt.Fprintln(stdout, "Usage: scalelab run SCENARIO [flags]")
			fs.PrintDefaults()
			return nil
		}
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmds := []string{"run", "list", "cluster", "version", "help"}
	msg := fmt.Sprintf("unknown command %q; commands: %s", cmd, strings.Join(cmds, ", "))
	if n := setting.Nearest(cmd, cmds); n != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", n)
	}
	return usageErr("%s", msg)
}
