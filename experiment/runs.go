package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/slo"
)

// execute runs one run through the runner. Runs that could not finish are
// recorded and the experiment goes on; bad usage, interruption and
// internal errors abort it.
func (x *executor) execute(ctx context.Context, opts *runner.Options, dir string, repeat int) (RunRef, slo.Table, error) {
	ref := RunRef{Repeat: repeat, Dir: dir, Seed: opts.Seed, Start: time.Now().UTC()}
	var doc *results.Run
	var err error
	start := time.Now()
	if opts.Segment.Split() {
		// N segment processes, merged into the run's directory (segments.go)
		if doc, err = x.runSegments(ctx, opts); doc == nil && results.ExitCode(err) != results.ExitUnfinished {
			return ref, nil, &errAbort{fmt.Errorf("%s: %w", dir, err)}
		}
	} else {
		plan, perr := runner.NewPlan(opts)
		if perr != nil {
			return ref, nil, &errAbort{fmt.Errorf("%s: %w", dir, perr)}
		}
		obs := runner.Observer(runner.Quiet{})
		if x.o.Observer != nil {
			obs = x.o.Observer()
		}
		doc, err = plan.Execute(ctx, obs, io.Discard, io.Discard)
	}
	ref.Seconds = time.Since(start).Seconds()
	x.runsDone++
	x.runSeconds += ref.Seconds
	x.res.Totals.Runs++
	x.res.Totals.Seconds += ref.Seconds
	code := results.ExitCode(err)
	ref.ExitCode = code
	if err != nil && !errors.Is(err, results.ErrReported) {
		ref.Error = metrics.Redact(err.Error())
	}
	if doc != nil {
		ref.Status, ref.ExitCode, ref.Failures = doc.Status, doc.ExitCode, doc.Failures
		if doc.Totals != nil {
			ref.ThroughputPerS = doc.Totals.ThroughputPerS
		}
		if doc.Telemetry != nil {
			ref.Saturation = doc.Telemetry.Saturation
		}
	}
	switch code {
	case results.ExitOK, results.ExitCheckFailed:
		if doc != nil && len(doc.Summary) > 0 {
			ref.Measured = true
			x.res.Totals.Measured++
			return ref, slo.FromRun(doc), nil
		}
		return ref, nil, nil
	case results.ExitUnfinished:
		x.res.Totals.Unfinished++
		return ref, nil, nil
	}
	return ref, nil, &errAbort{fmt.Errorf("run %s: %w", dir, err)}
}

// progressStart begins a run's progress line: its number, of how many
// when known, and what it is.
func (x *executor) progressStart(c *Combination, what string) {
	n := x.runsDone + 1
	total := ""
	if x.remaining != nil {
		total = fmt.Sprintf("/%d", x.runsDone+1+x.remaining()) // this run is already counted as started
	}
	fmt.Fprintf(x.o.Stderr, "[%d%s] %s %s, %s ...", n, total, c.ID, c.Label, what)
}

// progressDone ends a run's progress line: its throughput or why it
// failed, and the time left.
func (x *executor) progressDone(ref RunRef, extra string) {
	eta := ""
	if x.remaining != nil && x.runsDone > 0 {
		per := x.runSeconds / float64(x.runsDone) * float64(time.Second)
		if left := x.remaining(); left > 0 {
			eta = fmt.Sprintf(", ETA %s", time.Duration(float64(left)*per).Round(time.Second))
			if x.upTo != nil {
				if most := x.upTo(); most > left {
					eta += fmt.Sprintf(" (at most %s if the CI narrows slowly)", time.Duration(float64(most)*per).Round(time.Second))
				}
			}
		}
	}
	status := ref.Status
	if status == "" {
		status = "error"
	}
	if ref.Measured {
		fmt.Fprintf(x.o.Stderr, " %.1f ops/s (%.1fs, %s%s%s)\n", ref.ThroughputPerS, ref.Seconds, status, extra, eta)
		return
	}
	msg := ref.Error
	if msg == "" && len(ref.Failures) > 0 {
		msg = ref.Failures[0]
	}
	fmt.Fprintf(x.o.Stderr, " %s, exit %d: %s%s\n", status, ref.ExitCode, msg, eta)
}
