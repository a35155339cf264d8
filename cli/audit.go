package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/runner"
)

// auditCmd is `scalelab audit DIR`.
func auditCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "audit DIR",
		Short: "read back the acknowledged writes of a run (one whose process died, too)",
		Long: `Reads back every write recorded in a run's history.log (docs/audit.md) and writes the result into
its run.json and report.html: the acknowledged-write audit of a run whose process died before its
own read-back (run.json still "running": its summary is rebuilt first, as 'scalelab report' does),
or again for any audited run. The engine and the scenario are reopened as run.json records them:
the local cluster by name, or the run's own --target, as its command line gave it (passwords from the environment, as for
a run). Keys the store changed after the run (a later version than any the run wrote; after a
later run recorded on the same cluster, a value from before the run or none) are counted
"overwritten since the run: not judged", not lost; after a killed run, keys holding a write whose
record the process never wrote are "written by the run but not yet recorded when it was killed: not
judged". A verdict that differs from the run's own audit is noted in run.json. A store that cannot
be reopened as it was is refused before any read-back, run.json left as it was: a memory engine run
(its data ended with its process) and a SQLite file that no longer exists (never created anew).
Exit codes: 0 no acknowledged write lost, 1 some lost, 2 bad usage (a memory engine run), 4 the
read-back could not finish (the store file is gone).`,
		Example:           "  scalelab audit scalelab-results/RUN",
		Args:              exactArgs(1, "one results DIR"),
		ValidArgsFunction: completeDirs,
		RunE: func(c *cobra.Command, args []string) error {
			return auditDir(c.Context(), args[0], c.OutOrStdout(), c.ErrOrStderr())
		},
	}
}

// auditDir reads back the writes of the run in dir.
func auditDir(ctx context.Context, dir string, stdout, stderr io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, results.RunFile)); err != nil {
		return usageErr("audit: %s is not a results directory of a run: no %s", dir, results.RunFile)
	}
	r, rebuilt, err := report.Rebuild(dir)
	if err != nil {
		return withCode(ExitUnfinished, fmt.Errorf("audit: %w", err))
	}
	if rebuilt {
		fmt.Fprintf(stderr, "audit: %s: the process died during the run; its summary was rebuilt from the streamed files\n", dir)
	}
	aerr := runner.Reaudit(ctx, dir, r, stderr)
	if results.ExitCode(aerr) == ExitUsage || errors.Is(aerr, runner.ErrStoreGone) {
		return aerr
	}
	if aerr != nil && r.Audit == nil {
		return aerr
	}
	if err := results.WriteJSON(filepath.Join(dir, results.RunFile), r); err != nil {
		return withCode(ExitUnfinished, fmt.Errorf("audit: %w", err))
	}
	if err := report.WriteHTML(filepath.Join(dir, results.ReportFile), r, dir); err != nil {
		return withCode(ExitUnfinished, fmt.Errorf("audit: %w", err))
	}
	report.TerminalAudit(stdout, r)
	if aerr != nil {
		return aerr
	}
	if r.Audit != nil && (r.Audit.Lost > 0 || r.Audit.Registers != nil && (r.Audit.Registers.Lost > 0 || r.Audit.Registers.Resurrected > 0)) {
		return withCode(ExitCheckFailed, errReported)
	}
	return nil
}
