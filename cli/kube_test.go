package cli

import (
	"context"
	"strings"
	"testing"
)

// TestKubeCommand renders both Jobs as a user would and refuses bad input
// with exit code 2 saying what is wrong.
func TestKubeCommand(t *testing.T) {
	ctx := context.Background()
	code, out, errs := run(t, ctx, "kube", "job", "--name", "ycsb8", "--image", "scalelab:dev", "--segments", "8", "--start-in", "2m",
		"--results-claim", "res", "--", "ycsb", "--engine", "postgres", "--target", "postgres://scalelab@pg:5432/db", "--users", "64", "--duration", "5m")
	if code != 0 || !strings.Contains(out, "completionMode: Indexed") || !strings.Contains(out, "$(JOB_COMPLETION_INDEX)/8") ||
		!strings.Contains(errs, "the segments start at") {
		t.Fatalf("kube job: %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = run(t, ctx, "kube", "setup", "--name", "ycsb8", "--image", "scalelab:dev", "--results-claim", "res", "--", "ycsb")
	if code != 0 || !strings.Contains(out, "name: ycsb8-setup") || !strings.Contains(out, "--load-only") {
		t.Fatalf("kube setup: %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"kube"}, "kube: no subcommand given (job, setup)"},
		{[]string{"kube", "job", "--name", "x", "--image", "i", "--segments", "2", "--results-claim", "r", "--", "ycsb", "--engine", "null"}, "missing required flags: --start-at or --start-in"},
		{[]string{"kube", "job", "--name", "x", "--image", "i", "--segments", "2", "--start-at", "soon", "--results-claim", "r", "--", "ycsb"}, "RFC 3339"},
		{[]string{"kube", "setup", "--name", "x", "--image", "i", "--results-claim", "r", "--", "ycsb", "--target", "postgres://u:s3cretpw@h/db"}, "holds a password"},
		{[]string{"kube", "setup", "--name", "x", "--image", "i", "--results-claim", "r", "ycsb"}, "go after --"},
		// The last pods' segments, not only the first, are checked.
		{[]string{"kube", "job", "--name", "x", "--image", "i", "--segments", "4", "--start-in", "2m", "--results-claim", "r", "--", "ycsb", "--engine", "postgres", "--target", "postgres://u@h/db", "--users", "2"}, "--segment 2/4: 2 users shared by 4 segments"},
	} {
		code, out, errs := run(t, ctx, c.args...)
		if code != ExitUsage || !strings.Contains(errs, c.want) || strings.Contains(out+errs, "s3cretpw") {
			t.Errorf("%v: exit %d, %q; want 2 saying %q", c.args, code, errs, c.want)
		}
	}
	if code, out, _ := run(t, ctx, "kube", "--help"); code != 0 || !strings.Contains(out, "Indexed Job") {
		t.Errorf("kube --help: %d %s", code, out)
	}
}
