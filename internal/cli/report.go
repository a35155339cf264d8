package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

const reportUsage = `Usage: scalelab report [--out FILE] DIR [DIR...]

With one results directory of a run, rebuild its report.html (a run whose
process died, run.json still saying "running", is first rebuilt from its
streamed files and marked incomplete). With an experiment's directory (holding
experiment.json), write its report.html. With several runs' directories,
compare them side by side, the first as the baseline: a table on stdout and a
page written to --out (default compare.html).
`

// reportCmd is `scalelab report`.
func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "where to write the page (default: DIR/report.html for one run, compare.html for several)")
	var dirs []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, reportUsage)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return nil
			}
			return usageErr("report: %v; see 'scalelab help report'", err)
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		dirs = append(dirs, rest[0])
		rest = rest[1:]
	}
	switch len(dirs) {
	case 0:
		fmt.Fprint(stderr, reportUsage)
		return usageErr("report: no results directory given")
	case 1:
		return reportOne(dirs[0], *out, stdout, stderr)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, results.RunFile)); err != nil {
			return usageErr("report: %s is not a results directory of a run: no %s", d, results.RunFile)
		}
	}
	path := *out
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
