package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/scalelab/scalelab/merge"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

const mergeUsage = `Usage: scalelab merge DIR... --out DIR [--allow-incomplete]

Adds the results directories of a divided test's segments (scalelab run
--segment I/N) into one results directory: interval histograms added per
operation per interval on the shared timeline (exact percentiles), counts,
errors and audits summed, series.csv rebuilt, SLOs evaluated on the whole,
and report.html. The segments must be those of one test (the same test
hash) and all present; --allow-incomplete merges those present and marks
the result incomplete (exit code 4). Exit codes as for a run: 1 when a
check or SLO failed, 2 for bad input. See docs/merge.md.
`

// mergeCmd is `scalelab merge`.
func mergeCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "the merged results directory (must not exist or be empty)")
	allow := fs.Bool("allow-incomplete", false, "merge the segments present when some are missing or did not finish; the result is marked incomplete")
	var dirs []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, mergeUsage)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return nil
			}
			return usageErr("merge: %v; see 'scalelab help merge'", err)
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		dirs = append(dirs, rest[0])
		rest = rest[1:]
	}
	if len(dirs) == 0 {
		fmt.Fprint(stderr, mergeUsage)
		return usageErr("merge: no segment directories given")
	}
	if *out == "" {
		return usageErr("merge: --out DIR is required: where to write the merged results")
	}
	doc, err := merge.Merge(dirs, *out, merge.Options{AllowIncomplete: *allow})
	if doc == nil {
		return err
	}
	report.Terminal(stdout, doc)
	report.TerminalAudit(stdout, doc)
	m := doc.Merged
	fmt.Fprintf(stdout, "merged %d of %d segments in %.2fs", len(m.Shards), m.Count, m.Seconds)
	if doc.Status == results.StatusIncomplete {
		fmt.Fprintf(stdout, " (incomplete: %s)", doc.Error)
	}
	fmt.Fprintf(stdout, "\nresults: %s\n", *out)
	return err
}
