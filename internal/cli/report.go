package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

// reportCmd is `scalelab report`.
func reportCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "report DIR [DIR...]",
		Short: "rebuild a run's report.html (repairing a crashed run), or compare runs",
		Long: `With one results directory of a run, rebuild its report.html (a run whose process died, run.json
still saying "running", is first rebuilt from its streamed files and marked incomplete). With an
experiment's directory (holding experiment.json), write its report.html. With several runs'
directories, compare them side by side, the first as the baseline: a table on stdout and a page
written to --out (default compare.html).`,
		Example: `  scalelab report scalelab-results/RUN
  scalelab report RUN1 RUN2 --out compare.html   # the first is the baseline`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeDirs,
		RunE: func(c *cobra.Command, dirs []string) error {
			return reportDirs(dirs, out, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&out, "out", "", "where to write the page (default: DIR/report.html for one run, compare.html for several)")
	return c
}

// reportDirs rebuilds one run's or experiment's page, or compares runs.
func reportDirs(dirs []string, out string, stdout, stderr io.Writer) error {
	if err := checkOutDir(out); err != nil {
		return err
	}
	switch len(dirs) {
	case 0:
		return usageErr("report: no results directory given; usage: scalelab report DIR [DIR...]")
	case 1:
		return reportOne(dirs[0], out, stdout, stderr)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, results.RunFile)); err != nil {
			return usageErr("report: %s is not a results directory of a run: no %s", d, results.RunFile)
		}
	}
	path := out
	if path == "" {
		path = "compare.html"
	}
	if err := report.CompareTerminal(stdout, dirs); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := report.WriteCompare(path, dirs); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(stdout, "comparison: %s\n", path)
	return nil
}

// checkOutDir refuses an --out whose directory does not exist (or is no
// directory) before anything is printed or written.
func checkOutDir(out string) error {
	if out == "" {
		return nil
	}
	dir := filepath.Dir(out)
	fi, err := os.Stat(dir)
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist):
		return usageErr("report: --out %s: directory %s does not exist; create it first or name another path", out, dir)
	case err != nil:
		return usageErr("report: --out %s: %v", out, err)
	case !fi.IsDir():
		return usageErr("report: --out %s: %s is not a directory", out, dir)
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return usageErr("report: --out %s is a directory; name the page's file (e.g. %s)", out, filepath.Join(out, "compare.html"))
	}
	return nil
}

// reportOne rebuilds the report of one run.
func reportOne(dir, out string, stdout, stderr io.Writer) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageErr("report: %s is not a directory", dir)
	}
	if report.IsExperiment(dir) {
		path, err := report.WriteExperiment(dir, out)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		fmt.Fprintf(stdout, "report: %s\n", path)
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, results.RunFile)); err != nil {
		return usageErr("report: %s is not a results directory: no %s (nor %s)", dir, results.RunFile, report.ExperimentFile)
	}
	r, rebuilt, err := report.Rebuild(dir)
	if err != nil {
		if errors.Is(err, report.ErrRunInProgress) {
			return usageErr("report: %v", err)
		}
		return fmt.Errorf("report: %w", err)
	}
	if rebuilt {
		fmt.Fprintf(stderr, "scalelab: %s: the run's process died; rebuilt its summary from the streamed files and marked it incomplete (exit code %d in run.json)\n", dir, r.ExitCode)
	}
	path := out
	if path == "" {
		path = filepath.Join(dir, results.ReportFile)
	}
	if err := report.WriteHTML(path, r, dir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	report.Terminal(stdout, r)
	fmt.Fprintf(stdout, "report: %s\n", path)
	return nil
}
