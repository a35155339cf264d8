package study

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/scalelab/scalelab/results"
)

// tinyExperiment is a seconds-long social experiment on the embedded SQLite.
const tinyExperiment = `name: tiny-mixes
scenario: social
engine: sqlite
settings:
  social.users: 300
  social.keys: uniform
load:
  users: 2
  duration: 1s
  warmup: 0s
factors:
  mix:
    - {label: D1, social.mix: d1}
    - {label: D2, social.mix: d2}
baseline: {mix: D1}
repeats: 2
order: interleaved
profiles:
  bigger: {repeats: 3}
`

const tinyStudy = `id: "900"
name: tiny
title: A tiny study for the tests
question: Is D2 slower than D1 on SQLite?
setup: the social users collection, 300 users, 2 threads
experiments:
  - {name: mixes, example: tiny.yaml, profiles: {quick: "", full: bigger}}
findings:
  - id: d2
    finding: D2 has fewer operations per second than D1.
    setup: 2 threads
    source: "Table 1 (synthetic)"
    published: [{label: D2, value: 50, unit: ops/s}, {label: D1, value: 100, unit: ops/s}]
    about: throughput D2 / D1
    expect: lower
    large: true
    measure: {experiment: mixes, levels: {mix: D2}, op: "(all)", metric: throughput}
    reference: {levels: {mix: D1}}
  - id: read-time
    finding: Reads take the same time in both mixes.
    setup: 2 threads
    source: "Figure 2 (synthetic)"
    published: []
    about: read mean D2 / D1
    expect: same
    measure: {experiment: mixes, levels: {mix: D2}, op: users.read, metric: mean}
    reference: {levels: {mix: D1}}
  - id: shards
    finding: Sharding helps.
    setup: 2 shards
    source: "Table 3 (synthetic)"
    published: []
    about: 2 shards / 1
    not_reproducible: no shards here
`

// TestRunTinyStudy runs a study end to end on SQLite (seconds): its
// experiment through the experiment machinery, study.json, the page and
// its summary, each row with a verdict from the runs' values; then rebuilds
// the page from the directory as `study show` does.
func TestRunTinyStudy(t *testing.T) {
	st, err := Parse("900-tiny.yaml", []byte(tinyStudy))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"tiny.yaml": {Data: []byte(tinyExperiment)}}
	if err := CheckAgainst(st, fsys, scenarioOps()); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "study")
	var out, progress bytes.Buffer
	rec, got, err := Run(context.Background(), st, RunOptions{Profile: "quick", Out: dir, Stdout: &out, Stderr: &progress, Examples: fsys, Args: []string{"scalelab", "study", "run", "900"}})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, progress.String())
	}
	if got != dir || rec.Status != "ok" || len(rec.Experiments) != 1 || rec.Experiments[0].Runs != 4 {
		t.Fatalf("record %+v in %s", rec, got)
	}
	if !strings.Contains(progress.String(), "experiment 1/1 mixes") || !strings.Contains(progress.String(), "about 4 runs") {
		t.Errorf("progress lines:\n%s", progress.String())
	}
	for _, f := range []string{RecordFile, PageFile, SummaryFile, filepath.Join("mixes", results.ExperimentFile)} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	page, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(page.Rows))
	}
	verdicts := []string{Agrees, Disagrees, NotSignificant, NotReproducible}
	for _, r := range page.Rows[:2] {
		if !slices.Contains(verdicts, r.Outcome.Verdict) || r.Outcome.Reason == "" {
			t.Errorf("%s: outcome %+v", r.Finding.ID, r.Outcome)
		}
		if r.Measure == nil || len(r.Measure.Values) != 2 || len(r.Reference.Values) != 2 || r.Outcome.Ratio == nil {
			t.Fatalf("%s: figures %+v %+v", r.Finding.ID, r.Measure, r.Reference)
		}
		if r.Outcome.Verdict == Disagrees && r.Explanation == "" {
			t.Errorf("%s disagrees without an explanation", r.Finding.ID)
		}
	}
	// The verdict is the rule applied to the values in experiment.json,
	// then the host rule to the runs' telemetry (on a busy machine either
	// side's host may have saturated).
	row := page.Rows[0]
	want := Decide(row.Finding, row.Measure.Values, row.Reference.Values)
	hostRule(row.Finding, row.Measure, row.Reference, &want)
	if want.Verdict != row.Outcome.Verdict {
		t.Errorf("verdict %s, the rules give %s (%s)", row.Outcome.Verdict, want.Verdict, want.Reason)
	}
	if r := page.Rows[2]; r.Outcome.Verdict != NotReproducible || r.Outcome.Reason != "no shards here" {
		t.Errorf("not reproducible row: %+v", r.Outcome)
	}
	html, _ := os.ReadFile(filepath.Join(dir, PageFile))
	md, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	for _, s := range []string{"Absolute times are not comparable", "Table 1 (synthetic)", "no shards here", page.Rows[0].Outcome.Verdict} {
		if !strings.Contains(string(html), s) || !strings.Contains(string(md), s) || !strings.Contains(out.String(), s) {
			t.Errorf("%q missing from the page, the summary or the terminal", s)
		}
	}
	t.Log(out.String())
	if !strings.Contains(string(md), "scalelab study run 900") || !strings.Contains(out.String(), "cores") {
		t.Errorf("summary without the command or terminal without the machine:\n%s", out.String())
	}
}

// TestRunRefusesBadProfile: a profile the study has not is a usage error
// before any directory exists.
func TestRunRefusesBadProfile(t *testing.T) {
	st, err := Parse("900-tiny.yaml", []byte(tinyStudy))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "study")
	_, _, err = Run(context.Background(), st, RunOptions{Profile: "huge", Out: dir, Examples: fstest.MapFS{"tiny.yaml": {Data: []byte(tinyExperiment)}}})
	if results.ExitCode(err) != results.ExitUsage || !strings.Contains(err.Error(), "quick, full") {
		t.Fatalf("error %v (exit %d), want a usage error naming quick, full", err, results.ExitCode(err))
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("directory created: %v", err)
	}
}

// TestRunFailedExperimentExits: a study whose experiment cannot run
// (its store is unreachable) still writes its page, records the
// experiment as failed, and ends with exit code 4, not 0.
func TestRunFailedExperimentExits(t *testing.T) {
	exp := strings.Replace(tinyExperiment, "engine: sqlite", "engine: postgres\ntarget: postgres://scalelab@127.0.0.1:1/scalelab", 1)
	st, err := Parse("900-tiny.yaml", []byte(tinyStudy))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"tiny.yaml": {Data: []byte(exp)}}
	dir := filepath.Join(t.TempDir(), "study")
	var out, progress bytes.Buffer
	rec, _, err := Run(context.Background(), st, RunOptions{Profile: "quick", Out: dir, Stdout: &out, Stderr: &progress, Examples: fsys, Args: []string{"scalelab", "study", "run", "900"}})
	if code := results.ExitCode(err); code != results.ExitUnfinished || !strings.Contains(fmt.Sprint(err), "mixes") {
		t.Fatalf("exit %d (%v), want %d naming the experiment\n%s", code, err, results.ExitUnfinished, progress.String())
	}
	if rec.Status != "failed" || len(rec.Experiments) != 1 || rec.Experiments[0].Status != "failed" {
		t.Fatalf("record %+v", rec)
	}
	if _, err := os.Stat(filepath.Join(dir, PageFile)); err != nil {
		t.Fatalf("no page after a failed experiment: %v", err)
	}
}

// TestRunInterruptedStudy: a study stopped by the user (its context
// cancelled, as Ctrl-C does) ends with the interruption's exit code, and
// its measured rows are "not measured: interrupted", not "not
// reproducible here"; the study file's own not-reproducible row stays.
func TestRunInterruptedStudy(t *testing.T) {
	st, err := Parse("900-tiny.yaml", []byte(tinyStudy))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "study")
	var out, progress bytes.Buffer
	rec, _, err := Run(ctx, st, RunOptions{Profile: "quick", Out: dir, Stdout: &out, Stderr: &progress,
		Examples: fstest.MapFS{"tiny.yaml": {Data: []byte(tinyExperiment)}}})
	if code := results.ExitCode(err); code != results.ExitInterrupted {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, results.ExitInterrupted, progress.String())
	}
	if rec.Status != "interrupted" || rec.Experiments[0].Status != "interrupted" {
		t.Fatalf("record %+v", rec)
	}
	page, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Rows[:2] {
		if r.Outcome.Verdict != Interrupted || !strings.Contains(r.Outcome.Reason, "experiment mixes") {
			t.Errorf("%s: %+v", r.Finding.ID, r.Outcome)
		}
	}
	if r := page.Rows[2]; r.Outcome.Verdict != NotReproducible {
		t.Errorf("the study file's not reproducible row: %+v", r.Outcome)
	}
	if !strings.Contains(out.String(), "d2 (Table 1 (synthetic)): not measured: interrupted") {
		t.Errorf("terminal:\n%s", out.String())
	}
}
