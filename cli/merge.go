package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/scalelab/scalelab/merge"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

// mergeCmd is `scalelab merge`.
func mergeCmd() *cobra.Command {
	var out string
	var allow bool
	c := &cobra.Command{
		Use:   "merge DIR... --out DIR",
		Short: "add the segments of a divided test (run --segment I/N) into one result",
		Long: `Adds the results directories of a divided test's segments (scalelab run --segment I/N) into one
results directory: interval histograms added per operation per interval on the shared timeline
(exact percentiles), counts, errors and audits summed, series.csv rebuilt, SLOs evaluated on the
whole, and report.html. The segments must be those of one test (the same test hash) and all
present; --allow-incomplete merges those present and marks the result incomplete (exit code 4).
Exit codes as for a run: 1 when a check or SLO failed, 2 for bad input. See docs/merge.md.`,
		Example:           "  scalelab merge shard-0 shard-1 shard-2 shard-3 --out merged",
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeDirs,
		RunE: func(c *cobra.Command, dirs []string) error {
			return mergeDirs(dirs, out, allow, c.OutOrStdout())
		},
	}
	c.Flags().StringVar(&out, "out", "", "the merged results directory (required; must not exist or be empty)")
	c.Flags().BoolVar(&allow, "allow-incomplete", false, "merge the segments present when some are missing or did not finish; the result is marked incomplete")
	_ = c.RegisterFlagCompletionFunc("out", completeDirs)
	return c
}

// mergeDirs merges the segment directories dirs into out.
func mergeDirs(dirs []string, out string, allow bool, stdout io.Writer) error {
	if len(dirs) == 0 {
		return usageErr("merge: no segment directories given; usage: scalelab merge DIR... --out DIR")
	}
	if out == "" {
		return usageErr("merge: --out DIR is required: where to write the merged results")
	}
	doc, err := merge.Merge(dirs, out, merge.Options{AllowIncomplete: allow})
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
	fmt.Fprintf(stdout, "\nresults: %s\n", out)
	return err
}
