package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

// reportCmd is `scalelab report`.
func reportCmd() *cobra.Command {
	var out string
	var force bool
	c := &cobra.Command{
		Use:   "report DIR [DIR...]",
		Short: "rebuild a run's report.html (repairing a crashed run), or compare runs",
		Long: `With one results directory of a run, rebuild its report.html (a run whose process died, run.json
still saying "running", is first rebuilt from its streamed files and marked incomplete). With an
experiment's directory (holding experiment.json), write its report.html. With several runs'
directories, compare them side by side, the first as the baseline: the answer first (throughput and
p99 per operation and in total, their change and verdict, each run's status and measured time), then
what differs and every figure, on stdout; and a page written to --out, by default into the
baseline's directory as compare-<contender's name>.html. An existing page is never written over
without --force.`,
		Example: `  scalelab report scalelab-results/RUN
  scalelab report RUN1 RUN2                  # RUN1 is the baseline; writes RUN1/compare-RUN2.html
  scalelab report RUN1 RUN2 --out cmp.html --force`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeDirs,
		RunE: func(c *cobra.Command, dirs []string) error {
			return reportDirs(dirs, out, force, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&out, "out", "", "where to write the page (default: DIR/report.html for one run, FIRST/compare-<others' names>.html for several)")
	c.Flags().BoolVar(&force, "force", false, "write a comparison's page over an existing file")
	return c
}

// reportDirs rebuilds one run's or experiment's page, or compares runs.
func reportDirs(dirs []string, out string, force bool, stdout, stderr io.Writer) error {
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
		path = comparePath(dirs)
	}
	if _, err := os.Lstat(path); err == nil && !force {
		return usageErr("report: %s already exists; give --force to write over it, or name another page with --out", path)
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

// comparePath is where a comparison's page goes without --out: into the
// baseline's directory, named after the contenders
// (BASE/compare-CONTENDER.html, BASE/compare-C1-C2.html).
func comparePath(dirs []string) string {
	names := make([]string, 0, len(dirs)-1)
	for _, d := range dirs[1:] {
		names = append(names, filepath.Base(filepath.Clean(d)))
	}
	return filepath.Join(dirs[0], "compare-"+strings.Join(names, "-")+".html")
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
