package cli

import (
	"strings"
	"testing"
)

// FuzzParseArgs parses any command line through the command tree, without
// running it: the single-dash spelling, the flags and their values, and a
// flag error worded in scalelab's style with exit code 2, never a panic.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		"run ycsb -engine null -users=8",
		"cluster up app --engine x --name w",
		"run ycsb --duration 10",
		"run --userz 3 ycsb",
		"kube job --segments 4 -- ycbs -users 8",
		"cluster up --name w --engine sqlite app",
		"run ycsb --=x ---users -",
		"check d --slo p95<1s --json=maybe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, 0) {
			return // a process's arguments cannot hold a NUL byte (the parser keeps them NUL-joined)
		}
		root := newRoot()
		args := normalizeArgs(root, strings.Fields(line))
		c, rest, err := root.Find(args)
		if err != nil {
			return
		}
		c.InitDefaultHelpFlag()
		perr := c.ParseFlags(rest)
		if perr == nil {
			return
		}
		if wantsHelp(args) {
			return // the help is printed instead of the error
		}
		e := flagError(c, perr)
		if e == nil || ExitCode(e) != ExitUsage || e.Error() == "" {
			t.Fatalf("%q: flag error %v (exit %d), want a usage error", line, e, ExitCode(e))
		}
		if strings.Contains(e.Error(), "unknown shorthand") {
			t.Fatalf("%q: pflag's wording leaks: %v", line, e)
		}
	})
}
