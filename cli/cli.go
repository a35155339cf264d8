// Package cli implements the scalelab command line on cobra: one file per
// command, the help and flag errors every command shares (help.go,
// flagerr.go), shell completion (complete.go) and the mapping from errors
// to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scalelab/scalelab/metrics"
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
			fmt.Fprintln(stderr, prefix+metrics.Redact(err.Error()))
		}
		return code
	}
	return ExitOK
}

// Run parses args with the command tree and runs the command they name.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == runner.ChildCommand { // an experiment's segment process; not listed
		return runner.RunChild(ctx, os.Stdin, stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...)
	}
	root := newRoot()
	root.SetArgs(normalizeArgs(root, args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetIn(os.Stdin)
	_, err := root.ExecuteContextC(ctx)
	return err
}

func init() {
	cobra.EnableCommandSorting = false // commands in the order newRoot adds them
}

// newRoot builds the whole command tree.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "scalelab",
		Short: "measure how an application's data backend scales",
		Long: `scalelab runs an application scenario against a data store under a load model and writes a
self-describing results directory (run.json, interval histograms, report.html). Every command
answers --help; 'scalelab completion SHELL' prints a completion script for bash, zsh, fish or
powershell.
Exit codes: 0 ok, 1 a check failed, 2 bad usage, 3 interrupted, 4 the run could not finish,
70 internal error.`,
		Example: `  scalelab run ycsb --engine null --users 16 --duration 20s
  scalelab list settings postgres
  scalelab completion bash > /etc/bash_completion.d/scalelab`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				printHelp(c, c.ErrOrStderr())
				return usageErr("no command given")
			}
			return unknownSub(c, args[0])
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(flagError)
	root.SetHelpFunc(func(c *cobra.Command, _ []string) { printHelp(c, c.OutOrStdout()) })
	root.SetHelpCommand(helpCmd(root))
	root.AddCommand(runCmd(), listCmd(), clusterCmd(), experimentCmd(), studyCmd(), checkCmd(), reportCmd(), auditCmd(),
		serveCmd(), mergeCmd(), kubeCmd(), versionCmd(), completionCmd(root))
	walk(root, func(c *cobra.Command) {
		c.Flags().SortFlags = false // flags in the order declared
		noFileNames(c)
	})
	return root
}

// path is a command's path without the program name: "cluster up".
func path(c *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), c.Root().Name()), " ")
}

// visibleSubs names c's subcommands users see.
func visibleSubs(c *cobra.Command) []string {
	var names []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() || s.Name() == "help" {
			names = append(names, s.Name())
		}
	}
	return names
}

// unknownSub is the error for a subcommand of c that does not exist.
func unknownSub(c *cobra.Command, name string) error {
	subs := visibleSubs(c)
	what := "command"
	where := ""
	if c.HasParent() {
		what, where = "subcommand", path(c)+": "
	}
	msg := fmt.Sprintf("%sunknown %s %q; %ss: %s", where, what, name, what, strings.Join(subs, ", "))
	if n := setting.Nearest(name, subs); n != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", n)
	}
	return usageErr("%s", msg)
}

// groupCmd is a command whose work is done by its subcommands: alone it
// prints its help on stderr and exits 2.
func groupCmd(c *cobra.Command) *cobra.Command {
	c.Args = cobra.ArbitraryArgs
	c.ValidArgsFunction = cobra.NoFileCompletions
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			printHelp(c, c.ErrOrStderr())
			return usageErr("%s: no subcommand given (%s)", path(c), strings.Join(visibleSubs(c), ", "))
		}
		return unknownSub(c, args[0])
	}
	return c
}

// helpCmd is `scalelab help [COMMAND...]`.
func helpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:     "help [COMMAND]",
		Short:   "print the help of scalelab or of a command",
		Example: "  scalelab help run\n  scalelab help cluster up",
		Args:    cobra.ArbitraryArgs,
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			c, _, err := root.Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return visibleSubs(c), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil {
				return usageErr("help: %v", err)
			}
			if len(rest) > 0 && target.HasSubCommands() {
				return unknownSub(target, rest[0])
			}
			if target == root && len(args) > 0 {
				return unknownSub(root, args[0])
			}
			_ = target.ParseFlags(rest) // `help cluster up redis`: the help of redis clusters
			printHelp(target, c.OutOrStdout())
			return nil
		},
	}
}

// versionCmd is `scalelab version`.
func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "version",
		Short:             "print the version of this build",
		Long:              "Prints the version of this build (also: scalelab --version).",
		Example:           "  scalelab version",
		Args:              noArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintln(c.OutOrStdout(), "scalelab", Version())
			return nil
		},
	}
}

// noArgs refuses positional arguments in scalelab's words.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr("%s takes no arguments, got %q; see 'scalelab %s --help'", path(c), args, path(c))
	}
	return nil
}

// exactArgs wants n positional arguments, described by what.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return usageErr("%s: no %s given; usage: %s", path(c), strings.TrimPrefix(what, "one "), c.UseLine())
		case len(args) != n:
			return usageErr("%s: %s expected, got %q; usage: %s", path(c), what, args, c.UseLine())
		}
		return nil
	}
}
