package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/slo"
)

// finish computes the statistics and verdicts, writes every file, prints
// the table and returns the experiment's exit status.
func (x *executor) finish(ctx context.Context, runErr error) (*Result, error) {
	r := x.res
	x.remaining, x.upTo = nil, nil
	sloFailed := x.judge(runErr)
	checkFailed := checkFailures(r)
	if r.Kind == results.KindMatrix {
		r.Comparison = compare(r.Combinations, x.tables)
	}
	code, err := x.exit(ctx, runErr, sloFailed, checkFailed)
	r.Status = map[int]string{results.ExitOK: results.StatusOK, results.ExitInterrupted: results.StatusInterrupted}[code]
	if r.Status == "" {
		r.Status = results.StatusFailed
	}
	r.ExitCode = code
	if err != nil {
		r.Error = metrics.Redact(err.Error())
	}
	end := time.Now().UTC()
	r.End = &end
	if werr := x.save(); werr != nil && err == nil {
		err = results.WithCode(results.ExitUnfinished, werr)
	}
	WriteTable(x.o.Stdout, r)
	// the page of everything measured so far, also after an interruption
	if page, rerr := report.WriteExperiment(x.dir, ""); rerr != nil {
		fmt.Fprintf(x.o.Stderr, "warning: report.html: %v (scalelab report %s makes it again)\n", rerr, x.dir)
	} else {
		fmt.Fprintf(x.o.Stdout, "report: %s\n", page)
	}
	fmt.Fprintf(x.o.Stdout, "results: %s\n", x.dir)
	return r, err
}

// judge records, per combination, whether an adaptive repeat rule
// converged and the SLO's verdict on the mean of its measured runs; it
// returns how many combinations failed the SLO.
func (x *executor) judge(runErr error) int {
	r := x.res
	failed := 0
	for ci := range r.Combinations {
		cr := &r.Combinations[ci]
		if r.Kind == results.KindMatrix && x.s.Repeats.Fixed == 0 {
			st := stats.Summarize(x.ruleValues(ci))
			conv := st.CIHalfPct != nil && *st.CIHalfPct <= 100*x.s.Repeats.UntilCIWithin
			cr.Converged, cr.CIHalfPct = &conv, st.CIHalfPct
			if !conv && len(cr.Runs) > 0 && runErr == nil {
				r.Notes = append(r.Notes, fmt.Sprintf("%s %s: the CI did not reach %g%% within %d repeats", cr.ID, cr.Label, 100*x.s.Repeats.UntilCIWithin, x.s.Repeats.Max))
			}
		}
		if len(x.exprs) == 0 || r.Kind == results.KindKnee || len(cr.Runs) == 0 {
			continue
		}
		pass := false
		if tables := x.tables[ci]; len(tables) > 0 {
			cr.SLO, pass = slo.Check(x.exprs, meanTable(tables))
		} else {
			cr.SLO = []slo.Outcome{{SLO: strings.Join(r.SLO, ", "), Detail: "no run was measured"}}
		}
		cr.SLOPass = &pass
		if pass {
			continue
		}
		failed++
		for _, o := range cr.SLO {
			if !o.Pass {
				r.Failures = append(r.Failures, fmt.Sprintf("%s %s: SLO %s: %s", cr.ID, cr.Label, o.SLO, o.Detail))
			}
		}
	}
	return failed
}

// checkFailures counts the runs that failed a check, adding their
// failures to the result's.
func checkFailures(r *Result) int {
	n := 0
	for _, cr := range r.Combinations {
		for _, run := range cr.Runs {
			if run.ExitCode == results.ExitCheckFailed {
				n++
				for _, f := range run.Failures {
					r.Failures = append(r.Failures, fmt.Sprintf("%s %s: %s", cr.ID, run.Dir, f))
				}
			}
		}
	}
	return n
}

// exit is the experiment's exit code and error.
func (x *executor) exit(ctx context.Context, runErr error, sloFailed, checkFailed int) (int, error) {
	r := x.res
	switch {
	case ctx.Err() != nil || results.ExitCode(runErr) == results.ExitInterrupted:
		return results.ExitInterrupted, results.WithCode(results.ExitInterrupted, errors.New("experiment interrupted; the runs so far are in "+x.dir))
	case runErr != nil:
		return results.ExitCode(runErr), runErr
	case r.Totals.Unfinished > 0:
		return results.ExitUnfinished, results.WithCode(results.ExitUnfinished, fmt.Errorf("%d of %d runs could not finish (their run.json says why)", r.Totals.Unfinished, r.Totals.Runs))
	case sloFailed > 0 || checkFailed > 0 || kneeFailed(r):
		return results.ExitCheckFailed, results.WithCode(results.ExitCheckFailed, fmt.Errorf("%s", failSummary(sloFailed, checkFailed, r)))
	}
	return results.ExitOK, nil
}

// failSummary says what failed, for the experiment's error.
func failSummary(sloFailed, checkFailed int, r *Result) string {
	var parts []string
	if sloFailed > 0 {
		parts = append(parts, fmt.Sprintf("the SLO failed for %d of %d combinations", sloFailed, len(r.Combinations)))
	}
	if checkFailed > 0 {
		parts = append(parts, fmt.Sprintf("%d runs failed a check", checkFailed))
	}
	if kneeFailed(r) {
		parts = append(parts, "no load searched met the SLO")
	}
	return strings.Join(parts, "; ")
}

// sanitize makes a name safe for a directory.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, s)
	if s == "" || strings.Trim(s, ".") == "" {
		return "experiment"
	}
	return s
}
