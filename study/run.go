package study

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/scalelab/scalelab/examples"
	"github.com/scalelab/scalelab/experiment"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// RecordFile is the study's record in its results directory: the study
// file as it was run, the profile, the machine and each experiment's
// directory (beside it, one experiment results directory per experiment).
const RecordFile = "study.json"

// PageFile is the study page in the results directory.
const PageFile = "study.html"

// Record is study.json.
type Record struct {
	Schema      int             `json:"schema"`
	Study       Study           `json:"study"`
	Profile     string          `json:"profile"`
	Command     []string        `json:"command"`
	Scalelab    results.Version `json:"scalelab"`
	Host        results.Host    `json:"host"`
	Start       time.Time       `json:"start"`
	End         *time.Time      `json:"end,omitempty"`
	Status      string          `json:"status"` // running, ok, failed, interrupted
	Experiments []RunExperiment `json:"experiments"`
}

// RunExperiment is one experiment of a study run.
type RunExperiment struct {
	Name    string  `json:"name"`
	File    string  `json:"file"`              // examples/NAME.yaml
	Profile string  `json:"profile,omitempty"` // the experiment file's profile applied
	Repeats int     `json:"repeats,omitempty"` // a fixed count the study gave; 0: the file's rule
	Dir     string  `json:"dir"`               // relative to the study directory
	Status  string  `json:"status"`            // pending, ok, checks failed (an SLO or check: the runs finished), failed, interrupted
	Exit    int     `json:"exit_code"`
	Error   string  `json:"error,omitempty"`
	Runs    int     `json:"runs"`
	Seconds float64 `json:"seconds"`
	// LoadStart and LoadEnd are the host's load averages (1, 5 and 15
	// minutes) when the experiment started and ended: the machine's
	// other work beside the runs' own telemetry.
	LoadStart []float64 `json:"loadavg_start,omitempty"`
	LoadEnd   []float64 `json:"loadavg_end,omitempty"`
}

// RunOptions control a study run.
type RunOptions struct {
	Profile string // quick or full
	Out     string // results directory (default scalelab-results/study-ID-TIME)
	Stdout  io.Writer
	Stderr  io.Writer
	Args    []string
	// Examples holds the experiment files (default: the embedded ones).
	Examples fs.FS
	// Now is the clock of the progress line (default time.Now).
	Now func() time.Time
}

type planned struct {
	e    *Experiment
	spec *experiment.Spec
	runs int // expected runs, for the ETA
}

// Run runs every experiment of a study at a profile through the
// experiment machinery (clusters, app and cache tiers as the files start
// them), then writes the study page. Bad input is an exit-2 error before
// any directory is created. An experiment that fails is recorded and the
// next one runs; an interruption stops the study, and the page is still
// written from what finished.
func Run(ctx context.Context, st *Study, o RunOptions) (*Record, string, error) {
	o.defaults()
	plan, err := planStudy(st, o)
	if err != nil {
		return nil, "", err
	}
	dir, err := studyDir(st, o)
	if err != nil {
		return nil, "", err
	}
	rec, total := newRecord(st, o, plan)
	if err := writeRecord(dir, rec); err != nil {
		return rec, dir, err
	}
	fmt.Fprintf(o.Stderr, "study %s (%s), profile %s: %d experiments, about %d runs, results in %s\n", st.ID, st.Name, o.Profile, len(plan), total, dir)
	stop, err := runPlanned(ctx, st, o, plan, dir, rec, total)
	if err != nil {
		return rec, dir, err
	}
	stop = finish(st, rec, o.Now().UTC(), stop)
	if err := writeRecord(dir, rec); err != nil {
		return rec, dir, err
	}
	page, err := Build(dir)
	if err != nil {
		return rec, dir, results.WithCode(results.ExitUnfinished, err)
	}
	if err := page.Write(dir, o.Stdout); err != nil {
		return rec, dir, results.WithCode(results.ExitUnfinished, err)
	}
	return rec, dir, stop
}

// defaults fills in the options left empty.
func (o *RunOptions) defaults() {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Examples == nil {
		o.Examples = examples.Files
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Profile == "" {
		o.Profile = "quick"
	}
}

// planStudy resolves and validates each experiment of st at the profile
// and counts its runs; an experiment that does not resolve is a usage
// error.
func planStudy(st *Study, o RunOptions) ([]planned, error) {
	var plan []planned
	for i := range st.Experiments {
		e := &st.Experiments[i]
		spec, err := ResolveFS(o.Examples, e, o.Profile)
		if err != nil {
			return nil, results.WithCode(results.ExitUsage, fmt.Errorf("study %s: %w", st.ID, err))
		}
		if err := spec.Validate(); err != nil {
			return nil, results.WithCode(results.ExitUsage, fmt.Errorf("study %s: experiment %s: %w", st.ID, e.Name, err))
		}
		combos, err := spec.Matrix()
		if err != nil {
			return nil, results.WithCode(results.ExitUsage, fmt.Errorf("study %s: experiment %s: %w", st.ID, e.Name, err))
		}
		reps := e.Repeats[o.Profile]
		if reps == 0 {
			reps = max(spec.Repeats.Fixed, spec.Repeats.Min, 1)
		}
		plan = append(plan, planned{e: e, spec: spec, runs: len(combos) * reps})
	}
	return plan, nil
}

// studyDir creates the results directory: o.Out, or a new one named
// after the study and the time under scalelab-results.
func studyDir(st *Study, o RunOptions) (string, error) {
	if o.Out != "" {
		if err := results.Create(o.Out); err != nil {
			return "", results.WithCode(results.ExitUsage, err)
		}
		return o.Out, nil
	}
	base := filepath.Join("scalelab-results", fmt.Sprintf("study-%s-%s-%s", st.ID, st.Name, o.Now().Format("20060102-150405")))
	dir, err := results.CreateUnique(base)
	if err != nil {
		return "", results.WithCode(results.ExitUnfinished, err)
	}
	return dir, nil
}

// newRecord starts the record of a study run with every planned
// experiment pending, and returns it with the runs expected in all.
func newRecord(st *Study, o RunOptions, plan []planned) (*Record, int) {
	rec := &Record{Schema: 1, Study: *st, Profile: o.Profile, Command: o.Args, Status: results.StatusRunning,
		Scalelab: results.Version{Version: results.BuildVersion(), Go: runtime.Version()}, Host: results.HostFacts(), Start: o.Now().UTC()}
	total := 0
	for _, p := range plan {
		rec.Experiments = append(rec.Experiments, RunExperiment{Name: p.e.Name, File: "examples/" + p.e.Example, Profile: p.e.Profiles[o.Profile],
			Repeats: p.e.Repeats[o.Profile], Dir: p.e.Name, Status: "pending"})
		total += p.runs
	}
	return rec, total
}

// runPlanned runs the planned experiments in turn, writing the record
// after each, and returns the exit-130 error of the experiment that was
// interrupted (which stops the study), or an error writing the record.
func runPlanned(ctx context.Context, st *Study, o RunOptions, plan []planned, dir string, rec *Record, total int) (stop, err error) {
	start := o.Now()
	done := 0
	for i, p := range plan {
		re := &rec.Experiments[i]
		fmt.Fprintf(o.Stderr, "study %s: experiment %d/%d %s (%s%s), about %d runs; %s\n", st.ID, i+1, len(plan), p.e.Name, re.File, profileText(re.Profile), p.runs, eta(o.Now().Sub(start), done, total))
		runExperiment(ctx, p, re, dir, o)
		done += re.Runs
		if re.Exit == results.ExitInterrupted || ctx.Err() != nil {
			re.Status = "interrupted"
			stop = results.WithCode(results.ExitInterrupted, fmt.Errorf("study %s interrupted in experiment %s", st.ID, p.e.Name))
		}
		// Runs expected but not made (a failed experiment) leave the total.
		total += re.Runs - p.runs
		if err := writeRecord(dir, rec); err != nil {
			return stop, err
		}
		if stop != nil {
			break
		}
	}
	return stop, nil
}

// runExperiment runs one planned experiment into its directory and
// records in re its time, load averages, exit code, status and runs.
func runExperiment(ctx context.Context, p planned, re *RunExperiment, dir string, o RunOptions) {
	t0 := o.Now()
	re.LoadStart = LoadAvg()
	res, err := experiment.Run(ctx, p.spec, experiment.Options{Out: filepath.Join(dir, re.Dir), Repeats: re.Repeats, Stdout: io.Discard, Stderr: o.Stderr, Args: o.Args})
	re.Seconds = o.Now().Sub(t0).Seconds()
	re.LoadEnd = LoadAvg()
	re.Exit = results.ExitCode(err)
	re.Status = "ok"
	if res != nil {
		re.Runs = res.Totals.Runs
	}
	switch {
	case err == nil:
	case re.Exit == results.ExitCheckFailed:
		// Every run finished; an SLO or a check failed, which the
		// experiment's own results say.
		re.Error = metrics.Redact(err.Error())
		re.Status = "checks failed"
	default:
		re.Error = metrics.Redact(err.Error())
		re.Status = "failed"
	}
}

// finish sets the record's end and status, and returns the study's error:
// stop (an interruption), or exit 4 naming the experiments that failed.
func finish(st *Study, rec *Record, end time.Time, stop error) error {
	rec.End = &end
	rec.Status = "ok"
	var failed []string
	for _, re := range rec.Experiments {
		if re.Status == "failed" {
			rec.Status = "failed"
			failed = append(failed, re.Name)
		}
	}
	if stop != nil {
		rec.Status = "interrupted"
	} else if len(failed) > 0 {
		// the page is still written (its rows say what was not
		// measured), but the study did not finish
		stop = results.WithCode(results.ExitUnfinished, fmt.Errorf("study %s: experiment %s failed (the page says why)", st.ID, strings.Join(failed, ", ")))
	}
	return stop
}

// profileText names the profile for a progress line ("" for none).
func profileText(p string) string {
	if p == "" {
		return ""
	}
	return ", profile " + p
}

// eta estimates the time left from the seconds per run so far.
func eta(elapsed time.Duration, done, total int) string {
	if done == 0 {
		return "ETA after the first experiment"
	}
	left := time.Duration(float64(elapsed) / float64(done) * float64(max(total-done, 0)))
	return fmt.Sprintf("%d of about %d runs done in %s, ETA %s", done, total, elapsed.Round(time.Second), left.Round(time.Second))
}

// writeRecord writes rec as dir's study.json, atomically; its error is
// exit 4 (the study's results could not be kept).
func writeRecord(dir string, rec *Record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return results.WithCode(results.ExitUnfinished, fmt.Errorf("encode %s: %w", RecordFile, err))
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, RecordFile), append(b, '\n')); err != nil {
		return results.WithCode(results.ExitUnfinished, err)
	}
	return nil
}

// ReadRecord reads a study directory's study.json.
func ReadRecord(dir string) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return nil, fmt.Errorf("%s is not a study results directory: %w", dir, err)
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, RecordFile), err)
	}
	return &rec, nil
}
