package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scalelab/scalelab/termtable"
)

// TestValidateFitsWidth: `experiment validate` of every example (its
// table of combinations and the commands below it) fits the terminal
// width of scalelab's tables.
func TestValidateFitsWidth(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, f := range files {
		code, out, errOut := run(t, context.Background(), "experiment", "validate", f)
		if code != 0 {
			t.Fatalf("validate %s: exit %d: %s", f, code, errOut)
		}
		if !strings.Contains(out, "commands (repeat 1):") {
			t.Errorf("validate %s: no commands listed:\n%s", f, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > termtable.Width {
				t.Errorf("validate %s: a line of %d columns (at most %d):\n%s", filepath.Base(f), n, termtable.Width, l)
			}
		}
	}
}

func TestShellLines(t *testing.T) {
	cmd := "c01: scalelab run records --engine sqlite --set records.bcrypt_cost=4 --set cache.mode=off --out DIR"
	got := shellLines(cmd, 60, "  ", "      ")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("not broken into lines:\n%s", got)
	}
	for i, l := range lines {
		if len(l) > 60 {
			t.Errorf("line %d longer than 60: %q", i, l)
		}
		if i < len(lines)-1 && !strings.HasSuffix(l, ` \`) {
			t.Errorf("line %d does not continue with a backslash: %q", i, l)
		}
		if strings.HasSuffix(strings.TrimSuffix(l, ` \`), "--set") {
			t.Errorf("line %d splits a flag from its value: %q", i, l)
		}
	}
	joined := strings.Join(strings.Fields(strings.ReplaceAll(got, `\`, "")), " ")
	if joined != cmd {
		t.Errorf("the lines do not make the command again:\n%s\n%s", joined, cmd)
	}
}
