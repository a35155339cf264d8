package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `study list` prints the five studies; `study run` refuses an unknown
// study or profile with exit 2 before any directory; `study show` on a
// directory that is not a study's is exit 2.
func TestStudyCommands(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := run(t, context.Background(), "study", "list")
	if code != 0 {
		t.Fatalf("study list: exit %d: %s", code, stderr)
	}
	for _, id := range []string{"000  selfback", "001  radish", "002  search", "003  logs", "004  whispr"} {
		if !strings.Contains(stdout, id) {
			t.Errorf("study list lacks %q:\n%s", id, stdout)
		}
	}
	if !strings.Contains(stdout, "examples/search-users.yaml") {
		t.Errorf("study list does not name the experiments:\n%s", stdout)
	}
	out := filepath.Join(t.TempDir(), "s")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"study", "run", "007", "--out", out}, `no study "007"; there are: 000 (selfback)`},
		{[]string{"study", "run", "002", "--profile", "huge", "--out", out}, "allowed: quick, full"},
		{[]string{"study", "show", t.TempDir()}, "not a study results directory"},
	} {
		code, _, stderr := run(t, context.Background(), c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused study run created %s", out)
	}
}
