package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/cluster/clustertest"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
)

// Every command and subcommand of the tree (new ones included) answers
// --help, -h and `help PATH` with exit 0, a usage line, an example, and
// every flag it declares explained, at most 100 columns wide.
func TestEveryCommandHelp(t *testing.T) {
	t.Parallel()
	var paths [][]string
	walk(newRoot(), func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		var flags []*pflag.Flag
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				flags = append(flags, f)
			}
		})
		p := strings.Fields(path(c))
		paths = append(paths, p)
		for _, args := range [][]string{append(p, "--help"), append(p, "-h"), append([]string{"help"}, p...)} {
			code, stdout, stderr := run(t, context.Background(), args...)
			if code != 0 {
				t.Errorf("%v: exit %d, want 0; stderr %q", args, code, stderr)
				continue
			}
			usage := strings.TrimSpace("Usage: scalelab " + path(c))
			if !strings.HasPrefix(stdout, usage) {
				t.Errorf("%v: help does not start with %q:\n%s", args, usage, stdout)
			}
			if c.Example == "" || !strings.Contains(stdout, "\nExamples:\n  ") || !strings.Contains(stdout[strings.Index(stdout, "\nExamples:"):], "scalelab "+path(c)) {
				t.Errorf("%v: help has no example:\n%s", args, stdout)
			}
			for _, f := range flags {
				if strings.TrimSpace(f.Usage) == "" {
					t.Errorf("%v: --%s has no description", args, f.Name)
				}
				if f.Name != "help" && !strings.Contains(stdout, "  --"+f.Name) {
					t.Errorf("%v: help does not explain --%s:\n%s", args, f.Name, stdout)
				}
			}
			for i, line := range strings.Split(stdout, "\n") {
				if len(line) > helpWidth {
					t.Errorf("%v: help line %d is %d columns wide: %q", args, i+1, len(line), line)
				}
			}
		}
	})
	if len(paths) < 20 {
		t.Errorf("walked %d commands, want every command and subcommand (20 or more): %v", len(paths), paths)
	}
}

// run --help keeps its groups and shows allowed values and defaults.
func TestRunHelpGroups(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, context.Background(), "run", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	order := []string{"Load:", "Engine and tiers:", "Output and checks:", "Faults:", "Many load machines:", "Examples:"}
	at := -1
	for _, w := range order {
		i := strings.Index(out, w)
		if i < at {
			t.Errorf("run --help: %q out of order (or missing):\n%s", w, out)
		}
		at = i
	}
	for _, w := range []string{"--duration duration", "(default 1s)", "auto|bar|lines|off (default auto)", "--set KEY=VALUE"} {
		if !strings.Contains(out, w) {
			t.Errorf("run --help lacks %q", w)
		}
	}
	for _, e := range engine.Names() {
		if !strings.Contains(out, e) {
			t.Errorf("run --help does not list engine %s among --engine's values", e)
		}
	}
	if strings.Contains(out, "\nOther:") {
		t.Errorf("a run flag is in no group:\n%s", out)
	}
}

// cluster --help names, from the registry, every engine that can start
// clusters, and the app tier's --cache-cluster.
func TestClusterHelpListsEngines(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, context.Background(), "cluster", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, p := range cluster.Provisioners() {
		if !strings.Contains(flat, " "+p+",") && !strings.Contains(flat, " "+p+".") {
			t.Errorf("cluster --help does not list %s:\n%s", p, out)
		}
	}
	if !strings.Contains(out, "cluster up app") || !strings.Contains(out, "--cache-cluster") {
		t.Errorf("cluster --help lacks `cluster up app --cache-cluster`:\n%s", out)
	}
}

// complete runs cobra's hidden completion command and returns the
// completions (without the directive line).
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, stderr := run(t, context.Background(), append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, ":") {
			break
		}
		name, _, _ := strings.Cut(line, "\t")
		got = append(got, name)
	}
	return got
}

func hasAll(got []string, want ...string) bool {
	for _, w := range want {
		if !contains(got, w) {
			return false
		}
	}
	return true
}

// The shell completes scenarios, engines, setting keys and values, load
// models and local clusters; `completion SHELL` prints each script.
func TestCompletion(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	clustertest.Saved(t, &cluster.State{Name: "pgc1", Engine: "postgres", Params: map[string]string{}})
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", ""}, scenario.Names()},
		{[]string{"run", "--engine", ""}, engine.Names()},
		{[]string{"run", "ycsb", "--engine", "post"}, []string{"postgres"}},
		{[]string{"run", "ycsb", "--model", ""}, []string{"closed", "rate", "phases"}},
		{[]string{"run", "ycsb", "--set", "ycsb.work"}, []string{"ycsb.workload="}},
		{[]string{"run", "ycsb", "--set", "ycsb.workload="}, []string{"ycsb.workload=a", "ycsb.workload=f"}},
		{[]string{"run", "ycsb", "--cluster", ""}, []string{"pgc1"}},
		{[]string{"cluster", "down", ""}, []string{"pgc1"}},
		{[]string{"cluster", "up", ""}, []string{"postgres", "app"}},
		{[]string{"cluster", "up", "memcached", "--opt", ""}, []string{"memory_mb=", "evictions="}},
		{[]string{"cluster", "up", "redis", "--opt", "maxmemory-policy="}, []string{"maxmemory-policy=allkeys-lru"}},
		{[]string{"list", "cluster", ""}, []string{"postgres", "redis", "app"}},
		{[]string{"serve", ""}, []string{"records", "mhealth"}},
		{[]string{"list", ""}, []string{"scenarios", "settings", "clusters"}},
		{[]string{""}, []string{"run", "cluster", "completion"}},
		{[]string{"kube", "job", "--name", "x", "--", ""}, []string{"ycsb", "logs"}},
		{[]string{"kube", "job", "--", "ycsb", "--us"}, []string{"--users"}},
	} {
		got := complete(t, tc.args...)
		if !hasAll(got, tc.want...) {
			t.Errorf("complete %q = %q, want %q among them", tc.args, got, tc.want)
		}
	}
	for _, args := range [][]string{{"run", "ycsb", "--users", ""}, {"serve", "records", "--listen", ""}, {"cluster", "up", "postgres", "--nodes", ""}} {
		code, out, _ := run(t, context.Background(), append([]string{cobra.ShellCompRequestCmd}, args...)...)
		if code != 0 || !strings.Contains(out, fmt.Sprintf(":%d\n", cobra.ShellCompDirectiveNoFileComp)) {
			t.Errorf("complete %q offers file names (or fails: exit %d):\n%s", args, code, out)
		}
	}
	if got := complete(t, "run", "ycsb", "--engine", "post"); len(got) != 1 {
		t.Errorf("complete --engine post = %q, want postgres alone", got)
	}
	// --set offers the keys of the run's scenario, engine and cache tier,
	// each once: not another engine's or scenario's
	keys := func(got []string) map[string]int {
		n := map[string]int{}
		for _, g := range got {
			k, _, _ := strings.Cut(g, "\t")
			n[k]++
		}
		return n
	}
	got := keys(complete(t, "run", "ycsb", "--cluster", "pgc1", "--cache", "redis", "--set", ""))
	for _, k := range []string{"ycsb.workload=", "postgres.pool_size=", "cache.mode=", "cache.redis.pool_size="} {
		if got[k] != 1 {
			t.Errorf("complete run ycsb --cluster pgc1 --cache redis --set: %s offered %d times, want once", k, got[k])
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "sqlite.") || strings.HasPrefix(k, "social.") || strings.HasPrefix(k, "cassandra.") {
			t.Errorf("complete run ycsb --cluster pgc1 --set offers %s", k)
		}
	}
	if got := keys(complete(t, "cluster", "up", "app", "--scenario", "records", "--set", "")); got["records.secret_file="] != 1 || got["ycsb.workload="] != 0 {
		t.Errorf("complete cluster up app --scenario records --set: %v", got)
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, stderr := run(t, context.Background(), "completion", sh)
		if code != 0 || !strings.Contains(out, "scalelab") || !strings.Contains(out, cobra.ShellCompRequestCmd) {
			t.Errorf("completion %s: exit %d, %d bytes; stderr %q", sh, code, len(out), stderr)
		}
	}
}

// kube job checks the run arguments after -- as run does, reports every
// missing required flag at once, and prints no manifest on bad input.
func TestKubeChecksRunArgs(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	clustertest.Saved(t, &cluster.State{Name: "pgk1", Engine: "postgres", Params: map[string]string{}})
	job := []string{"kube", "job", "--name", "t1", "--image", "scalelab:dev", "--results-claim", "res", "--segments", "4", "--start-in", "2m", "--"}
	pg := []string{"--engine", "postgres", "--target", "postgres://scalelab@pg:5432/db"}
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"kube", "job", "--segments", "4", "--", "ycbs"}, []string{
			"missing required flags: --name, --image, --results-claim, --start-at or --start-in", `unknown scenario "ycbs"`, `did you mean "ycsb"`}},
		{[]string{"kube", "setup", "--", "ycsb"}, []string{"missing required flags: --name, --image, --results-claim (see"}},
		{append(append(job, "ycsb", "--userz", "8"), pg...), []string{"unknown flag --userz (did you mean --users?)"}},
		{append(append(job, "ycsb", "-duration", "10"), pg...), []string{"--duration 10: add a unit"}},
		{append(append(job, "ycsb", "--set", "ycsb.workload=g"), pg...), []string{"a|b|c|d|e|f"}},
		{append(job, "ycsb", "--cluster", "pgk1"), []string{"--cluster pgk1: local clusters", "--target"}},
		{append(job, "ycsb", "--cluster", "nowhere"), []string{"--cluster nowhere: local clusters"}},
		{append(job, "ycsb"), []string{"sqlite engine keeps its data inside each scalelab process"}},
	} {
		code, stdout, stderr := run(t, context.Background(), tc.args...)
		if code != ExitUsage || stdout != "" {
			t.Errorf("%v: exit %d, stdout %d bytes; want 2 and no manifest; stderr %q", tc.args, code, len(stdout), stderr)
		}
		for _, w := range tc.wants {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, w)
			}
		}
	}
	code, stdout, stderr := run(t, context.Background(), append(append(job, "ycsb", "-users", "8"), pg...)...)
	if code != 0 || !strings.Contains(stdout, "completionMode: Indexed") || !strings.Contains(stdout, "- -users") {
		t.Errorf("a valid kube job: exit %d; stderr %q\n%s", code, stderr, stdout)
	}
}
