package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/scalelab/scalelab/experiment"
)

// checkCmd is `scalelab check`.
func checkCmd() *cobra.Command {
	var slos []string
	var asJSON bool
	c := &cobra.Command{
		Use:   "check RESULTS_DIR",
		Short: "exit 1 when a run or experiment misses an SLO (a CI gate)",
		Long: `Checks a run's results directory (run.json) or an experiment's (experiment.json, on the mean
over repeats) against SLOs; exits 1 when one fails or the run did not finish: a release gate for CI
pipelines. Without --slo, a run is checked against its recorded status and an experiment against
its own slo. A knee search passes when one of its steps meets the SLOs (the highest such step
is shown). SLOs: p50|p90|p95|p99|p99.9|mean|max < 250ms [for OP], errors < 1%,
throughput > 1000/s.`,
		Example: `  scalelab check scalelab-results/RUN --slo 'p95<1s' --slo 'errors<1%'
  scalelab check EXPERIMENT_DIR --json`,
		Args:              exactArgs(1, "one RESULTS_DIR"),
		ValidArgsFunction: completeDirs,
		RunE: func(c *cobra.Command, args []string) error {
			return check(args[0], slos, asJSON, c.OutOrStdout())
		},
	}
	c.Flags().StringArrayVar(&slos, "slo", nil, "an SLO, e.g. 'p95<1s', 'p99<250ms for read', 'errors<1%' (repeatable or comma-separated)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the outcome as JSON")
	_ = c.RegisterFlagCompletionFunc("slo", cobra.NoFileCompletions)
	return c
}

// check checks dir against slos.
func check(dir string, slos []string, asJSON bool, stdout io.Writer) error {
	g, err := experiment.CheckDir(dir, slos)
	if err != nil {
		return usageErr("check: %v", err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(g); err != nil {
			return err
		}
	} else {
		for _, it := range g.Items {
			verdict := "pass"
			if !it.Pass {
				verdict = "FAIL"
			}
			fmt.Fprintf(stdout, "%s %s\n", verdict, it.Name)
			if it.Detail != "" {
				fmt.Fprintf(stdout, "  %s\n", it.Detail)
			}
			for _, o := range it.Outcomes {
				mark := "ok  "
				if !o.Pass {
					mark = "FAIL"
				}
				fmt.Fprintf(stdout, "  %s %s: %s\n", mark, o.SLO, o.Detail)
			}
			for _, p := range it.Problems {
				fmt.Fprintf(stdout, "  FAIL %s\n", p)
			}
		}
	}
	if !g.Pass {
		if !asJSON {
			failed := 0
			for _, it := range g.Items {
				if !it.Pass {
					failed++
				}
			}
			fmt.Fprintf(stdout, "%d of %d checks failed\n", failed, len(g.Items))
		}
		return withCode(ExitCheckFailed, errReported)
	}
	if !asJSON {
		fmt.Fprintln(stdout, "all checks passed")
	}
	return nil
}
