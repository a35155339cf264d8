package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results/resultstest"
)

// Flag errors say what was wrong in scalelab's words, with the nearest
// valid name, exit 2, and create no results directory.
func TestFlagErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "never")
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"cluster", "up", "app", "--name", "w", "--engine", "x"}, []string{"cluster up app takes no --engine: the store's engine comes from --cluster STORE"}},
		{[]string{"cluster", "up", "app", "-engine", "x", "--name", "w"}, []string{"cluster up app takes no --engine: the store's engine comes from --cluster STORE"}},
		{[]string{"cluster", "up", "--name", "w", "--engine", "sqlite", "app"}, []string{"cluster up app takes no --engine: the store's engine comes from --cluster STORE"}},
		{[]string{"cluster", "up", "--name", "p", "postgres", "--engine", "postgres"}, []string{"cluster up postgres takes no --engine: the engine is the ENGINE argument"}},
		{[]string{"check", "somedir", "--users", "8"}, []string{"check somedir takes no --users; it is a flag of 'scalelab run'"}},
		{[]string{"run", "ycsb", "--userz", "8", "--out", out}, []string{"run: unknown flag --userz (did you mean --users?)", "see 'scalelab run --help'"}},
		{[]string{"run", "ycsb", "-userz", "8", "--out", out}, []string{"unknown flag --userz (did you mean --users?)"}},
		{[]string{"run", "ycsb", "--duration", "10", "--out", out}, []string{"--duration 10: add a unit, e.g. 10s"}},
		{[]string{"run", "ycsb", "-duration=10", "--out", out}, []string{"--duration 10: add a unit, e.g. 10s"}},
		{[]string{"run", "ycsb", "--duration", "soon", "--out", out}, []string{`--duration "soon": want a duration with its unit`}},
		{[]string{"run", "ycsb", "--users", "many", "--out", out}, []string{`--users "many": want a whole number`}},
		{[]string{"run", "ycsb", "--out", out, "--users"}, []string{"--users needs a value"}},
		{[]string{"run", "ycsb", "--audit=maybe", "--out", out}, []string{"--audit=maybe: want true or false"}},
		{[]string{"run", "ycsb", "--progress", "fancy", "--out", out}, []string{`--progress "fancy"`, "auto|bar|lines|off"}},
		{[]string{"run", "ycsb", "--set", "ycsb.workload=g", "--out", out}, []string{"ycsb.workload", `"g"`, "a|b|c|d|e|f"}},
		{[]string{"run", "ycsb", "mhealth", "--out", out}, []string{"one scenario expected"}},
		{[]string{"cluster", "up", "postgress", "--name", "p"}, []string{`engine "postgress" cannot start local clusters`, `did you mean "postgres"`}},
		{[]string{"cluster", "stauts"}, []string{`cluster: unknown subcommand "stauts"`, `did you mean "status"`}},
		{[]string{"cluster", "down"}, []string{"cluster down: no NAME given"}}, {[]string{"cluster", "down", "a", "b"}, []string{"cluster down: one NAME expected"}},
		{[]string{"runn", "--users", "8"}, []string{`unknown command "runn"`, `did you mean "run"`}},
		{[]string{"completion", "tcsh"}, []string{"completion: no completion for shell \"tcsh\"", "bash, zsh, fish"}},
		{[]string{"experiment", "run"}, []string{"experiment run: no FILE.yaml given"}},
		{[]string{"version", "extra"}, []string{"version takes no arguments"}},
	} {
		code, stdout, stderr := run(t, context.Background(), tc.args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %q", tc.args, code, stderr)
		}
		for _, w := range tc.wants {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, w)
			}
		}
		if strings.Contains(stdout+stderr, "Error:") || strings.Contains(stderr, "unknown shorthand") {
			t.Errorf("%v: cobra's or pflag's own wording leaks: %q", tc.args, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a results directory was created for bad input")
	}
}

// A request for help wins over a flag error beside it.
func TestHelpBesideBadFlag(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := run(t, context.Background(), "run", "ycsb", "--userz", "3", "--help")
	if code != 0 || !strings.Contains(stdout, "Usage: scalelab run SCENARIO") || stderr != "" {
		t.Errorf("run --userz --help: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
}

// The spellings Go's flag package accepted keep working: -flag value,
// -flag=value, --flag value, --flag=value, flags before or after the
// scenario.
func TestFlagSpellings(t *testing.T) {
	t.Parallel()
	for i, args := range [][]string{
		{"run", "ycsb", "-engine", "null", "-users=2", "-ops", "200", "-progress", "off"},
		{"run", "--engine=null", "--users", "2", "ycsb", "--ops=200", "--progress=off"},
	} {
		dir := filepath.Join(t.TempDir(), "r")
		code, _, stderr := run(t, context.Background(), append(args, "-out", dir)...)
		if code != 0 {
			t.Fatalf("%d %v: exit %d: %s", i, args, code, stderr)
		}
		r := resultstest.Read(t, dir)
		if r.Engine != "null" || r.Scenario != "ycsb" {
			t.Errorf("%v: run.json engine %q scenario %q, want null and ycsb", args, r.Engine, r.Scenario)
		}
		var ops int64
		for _, s := range r.Summary {
			ops += s.Started
		}
		if ops != 200 {
			t.Errorf("%v: %d operations started, want 200 (--ops)", args, ops)
		}
	}
}

// normalizeArgs spells known long flags with two dashes, up to "--" only,
// and leaves other words alone.
func TestNormalizeArgs(t *testing.T) {
	t.Parallel()
	got := normalizeArgs(newRoot(), []string{"kube", "job", "-name", "x", "-segments=4", "-h", "-x", "-5s", "--", "ycsb", "-users", "8"})
	want := []string{"kube", "job", "--name", "x", "--segments=4", "-h", "-x", "-5s", "--", "ycsb", "-users", "8"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("normalizeArgs = %q, want %q", got, want)
	}
}
