package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	mergeseg "github.com/scalelab/scalelab/merge"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/segment"
)

// MaxSegments bounds `segments: N`, the local load processes of a run.
const MaxSegments = 64

// segmentStartDelay is how far ahead of now a divided run's segments are
// told to start: time for N processes to start, connect and open the
// scenario.
const segmentStartDelay = 3 * time.Second

// SegmentsDirSuffix names the directory beside a divided run's directory
// that holds its segments' directories (RUN.segments/shard-I) and the
// setup run that loaded the data.
const SegmentsDirSuffix = ".segments"

// runSegments runs one run of a combination as N local scalelab processes
// (`segments: N`): the data is loaded once by an in-process --load-only
// run, then N segment processes start at one instant, and their results
// directories are merged into opts.Out. It returns the merged run.json
// document (nil when nothing was measured) and an error carrying the exit
// code as a run's would.
func (x *executor) runSegments(ctx context.Context, opts *runner.Options) (*results.Run, error) {
	n := opts.Segment.N()
	segDir := opts.Out + SegmentsDirSuffix
	if err := os.MkdirAll(segDir, 0o755); err != nil {
		return nil, results.WithCode(results.ExitUnfinished, fmt.Errorf("segments: %w", err))
	}
	if needsLoad(opts) {
		setup := *opts
		setup.Segment, setup.LoadOnly, setup.Faults, setup.SLO = segment.Whole, true, nil, nil
		setup.Out = filepath.Join(segDir, "setup")
		plan, err := runner.NewPlan(&setup)
		if err != nil {
			return nil, err
		}
		if _, err := plan.Execute(ctx, runner.Quiet{}, io.Discard, io.Discard); err != nil {
			return nil, fmt.Errorf("segments: load the data once: %w", err)
		}
	}
	exe := x.o.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, results.WithCode(results.ExitUnfinished, fmt.Errorf("segments: find the scalelab binary: %w", err))
		}
	}
	startAt := time.Now().Add(segmentStartDelay).UTC()
	shards := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		o := *opts
		o.Segment = segment.Segment{Index: i, Count: n}
		o.StartAt = startAt
		o.Out = filepath.Join(segDir, fmt.Sprintf("shard-%d", i))
		o.Sets = withoutLoad(opts.Sets)
		shards[i] = o.Out
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = runChild(ctx, exe, &o, o.Out+".log")
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, results.WithCode(results.ExitInterrupted, fmt.Errorf("segments: %w", ctx.Err()))
	}
	return mergeSegments(shards, opts.Out, errs)
}

// needsLoad reports whether the run loads data (its scenario's load
// setting is not set to false).
func needsLoad(opts *runner.Options) bool {
	scen, err := scenario.Lookup(opts.Scenario)
	if err != nil {
		return false
	}
	key := scen.Name() + ".load"
	for _, s := range opts.Sets {
		if k, v, _ := strings.Cut(s, "="); strings.TrimSpace(k) == key {
			return strings.TrimSpace(v) != "false"
		}
	}
	for _, s := range scen.Settings() {
		if s.Key == key {
			return s.Default != "false"
		}
	}
	return false
}

// withoutLoad drops the load setting from a segment's settings: the
// segment sets it to false itself.
func withoutLoad(sets []string) []string {
	var out []string
	for _, s := range sets {
		if k, _, _ := strings.Cut(s, "="); strings.HasSuffix(strings.TrimSpace(k), ".load") {
			continue
		}
		out = append(out, s)
	}
	return out
}

// runChild runs one segment as a scalelab process, its options as JSON on
// stdin and its output in logPath; an interrupted experiment interrupts
// it (SIGINT) so that it writes its results directory before it ends.
func runChild(ctx context.Context, exe string, o *runner.Options, logPath string) error {
	in, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("segment %s: %w", o.Segment, err)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("segment %s: %w", o.Segment, err)
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, exe, runner.ChildCommand)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("segment %s (log: %s): %w", o.Segment, logPath, err)
	}
	return nil
}

// mergeSegments merges the segments' directories into out. Segments that
// did not finish leave the merged result incomplete (exit code 4), which
// the experiment records as a run that could not finish.
func mergeSegments(shards []string, out string, errs []error) (*results.Run, error) {
	var present []string
	for _, d := range shards {
		if _, err := os.Stat(filepath.Join(d, results.RunFile)); err == nil {
			present = append(present, d)
		}
	}
	if len(present) == 0 {
		return nil, results.WithCode(results.ExitUnfinished, fmt.Errorf("segments: no segment wrote its results: %w", errors.Join(errs...)))
	}
	doc, err := mergeseg.Merge(present, out, mergeseg.Options{AllowIncomplete: true})
	if doc == nil {
		return nil, results.WithCode(results.ExitUnfinished, fmt.Errorf("segments: %w", err))
	}
	if doc.Status == results.StatusIncomplete {
		if e := errors.Join(errs...); e != nil {
			doc.Warnings = append(doc.Warnings, "segments: "+e.Error())
		}
	}
	return doc, err
}
