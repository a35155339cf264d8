package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/scalelab/scalelab/experiment"
)

const checkUsage = `Usage: scalelab check RESULTS_DIR [--slo 'p95<1s'] [--slo 'errors<1%'] [--json]
Checks a run's results directory (run.json) or an experiment's (experiment.json,
on the mean over repeats) against SLOs; exits 1 when one fails or the run did
not finish: a release gate for CI pipelines. Without --slo, a run is checked
against its recorded status and an experiment against its own slo.
SLOs: p50|p90|p95|p99|p99.9|mean|max < 250ms [for OP], errors < 1%, throughput > 1000/s.
`

// checkCmd is `scalelab check`.
func checkCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var slos multiFlag
	fs.Var(&slos, "slo", "an SLO (repeatable or comma-separated)")
	asJSON := fs.Bool("json", false, "print the outcome as JSON")
	pos, err := splitPositional(fs, args)
	if err != nil {
		return usageErr("check: %v\n%s", err, checkUsage)
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, checkUsage)
		return usageErr("check: one RESULTS_DIR expected, got %q", pos)
	}
	g, err := experiment.CheckDir(pos[0], slos)
	if err != nil {
		return usageErr("check: %v", err)
	}
	if *asJSON {
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
		return withCode(ExitCheckFailed, errReported)
	}
	if !*asJSON {
		fmt.Fprintln(stdout, "all checks passed")
	}
	return nil
}
