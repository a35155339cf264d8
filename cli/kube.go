package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scalelab/scalelab/kube"
	"github.com/scalelab/scalelab/segment"
)

// kubeCmd is `scalelab kube` and its subcommands.
func kubeCmd() *cobra.Command {
	c := groupCmd(&cobra.Command{
		Use:   "kube COMMAND",
		Short: "render the Kubernetes Jobs of a divided test (YAML on stdout)",
		Long: `Renders, on stdout, the Kubernetes manifests of a divided test (docs/kubernetes.md). 'job' is an
Indexed Job of --segments pods: pod I runs 'scalelab run SCENARIO [run flags] --segment I/N
--start-at T' and writes its results directory to RESULTS/NAME/shard-I on the --results-claim
volume; a failed segment is not run again. 'setup' is the Job that loads the data once ('scalelab
run SCENARIO [run flags] --load-only'): apply it first and wait for it. Collect the shard
directories and add them with 'scalelab merge'. Passwords never go into a manifest: keep them in a
Secret (--env-from-secret). The run arguments after -- are checked as 'scalelab run' checks them.`,
		Example: `  scalelab kube setup --name ycsb8 --image scalelab:dev --results-claim res \
      -- ycsb --engine postgres --target postgres://scalelab@pg:5432/db
  scalelab kube job --name ycsb8 --image scalelab:dev --results-claim res \
      --segments 8 --start-in 2m -- ycsb --engine postgres --target postgres://scalelab@pg:5432/db \
      --users 64`,
	})
	c.AddCommand(kubeJobCmd("job"), kubeJobCmd("setup"))
	return c
}

// completeRunArgs completes the run arguments after --: the scenario,
// then the run flags' names.
func completeRunArgs(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	dash := c.ArgsLenAtDash()
	switch {
	case dash < 0:
		return nil, cobra.ShellCompDirectiveNoFileComp
	case len(args) == dash:
		return completeScenarios(c, nil, toComplete)
	case strings.HasPrefix(toComplete, "-"):
		var names []string
		newRunCmd(&runFlags{}).Flags().VisitAll(func(f *pflag.Flag) {
			if strings.HasPrefix("--"+f.Name, toComplete) && !contains(kube.SetByRenderer, f.Name) {
				names = append(names, "--"+f.Name)
			}
		})
		return names, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// kubeFlags are the flags of `kube job` and `kube setup`.
type kubeFlags struct {
	spec    kube.Spec
	startAt string
	startIn time.Duration
}

// kubeJobCmd is `kube job` (what "job") or `kube setup`.
func kubeJobCmd(what string) *cobra.Command {
	f := &kubeFlags{}
	c := &cobra.Command{
		Use:   what + " [flags] -- SCENARIO [run flags]",
		Short: "render the Indexed Job whose pods are the segments of the test",
		Long: `Renders the Indexed Job of --segments pods: pod I runs 'scalelab run SCENARIO [run flags]
--segment I/N --start-at T'. --name, --image, --results-claim, --segments and --start-at (or
--start-in) are required. The run arguments after -- are checked as 'scalelab run' checks them
(scenario, flags, settings) before anything is printed; a --cluster of this machine cannot be
reached from the pods: give --target.`,
		Example: `  scalelab kube job --name ycsb8 --image scalelab:dev --results-claim res \
      --segments 8 --start-in 2m -- ycsb --engine postgres --target postgres://scalelab@pg:5432/db \
      --users 64`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeRunArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("kube %s: no run given: the run's scenario and flags go after -- (see 'scalelab kube %s --help')", what, what)
			}
			if dash := c.ArgsLenAtDash(); dash != 0 {
				before := args
				if dash > 0 {
					before = args[:dash]
				}
				return usageErr("kube %s: unexpected %q: the run's scenario and flags go after --", what, strings.Join(before, " "))
			}
			return kubeRender(what, f, args, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	if what == "setup" {
		c.Short = "render the Job that loads the data once, before the segments run"
		c.Long = `Renders the Job that loads the data once ('scalelab run SCENARIO [run flags] --load-only'): apply
it first and wait for it. --name, --image and --results-claim are required. The run arguments after -- are checked as 'scalelab run' checks them.`
		c.Example = `  scalelab kube setup --name ycsb8 --image scalelab:dev --results-claim res \
      -- ycsb --engine postgres --target postgres://scalelab@pg:5432/db`
	}
	s := &f.spec
	addGroup(c, "Job", func(fs *pflag.FlagSet) {
		fs.StringVar(&s.Name, "name", "", "the Job's name (a DNS-1123 label); the setup Job is NAME-setup (required)")
		fs.StringVar(&s.Image, "image", "", "a scalelab image, built from the repository's Dockerfile (required)")
		fs.StringVar(&s.Namespace, "namespace", "", "the namespace (default: kubectl's)")
		fs.StringVar(&s.ResultsClaim, "results-claim", "", "a PersistentVolumeClaim the results directories are written to (required)")
		fs.StringVar(&s.ResultsPath, "results-path", kube.DefaultResultsPath, "where the claim is mounted in the pods")
		if what == "job" {
			fs.IntVar(&s.Segments, "segments", 0, "segments: pods of the Indexed Job, each running one share of the test (required)")
			fs.StringVar(&f.startAt, "start-at", "", "the instant every segment starts its load (RFC 3339); this or --start-in is required")
			fs.DurationVar(&f.startIn, "start-in", 0, "start the load this long after now (instead of --start-at); leave time for the pods to be scheduled and pull the image")
		}
	})
	addGroup(c, "Pods", func(fs *pflag.FlagSet) {
		fs.StringVar(&s.CPU, "cpu", "", "CPU request and limit per pod (2, 500m)")
		fs.StringVar(&s.Memory, "memory", "", "memory request and limit per pod (1Gi)")
		fs.StringVar(&s.ServiceAccount, "service-account", "", "the pods' service account")
		fs.StringVar(&s.PullPolicy, "pull-policy", "", "image pull policy: Always|IfNotPresent|Never")
		fs.StringVar(&s.EnvFromSecret, "env-from-secret", "", "a Secret whose keys become the pods' environment (PGPASSWORD, ...)")
	})
	choices(c, "pull-policy", "Always", "IfNotPresent", "Never")
	return c
}

// kubeRender checks the flags and the run arguments, all problems at
// once, then prints the manifest.
func kubeRender(what string, f *kubeFlags, runArgs []string, stdout, stderr io.Writer) error {
	s := f.spec
	job := what == "job"
	var problems []string
	if job {
		switch {
		case f.startAt != "" && f.startIn != 0:
			problems = append(problems, "--start-at and --start-in are exclusive")
		case f.startAt != "":
			t, err := time.Parse(time.RFC3339Nano, f.startAt)
			if err != nil {
				problems = append(problems, fmt.Sprintf("--start-at %q: want an RFC 3339 time with its zone, e.g. 2026-11-24T10:00:00Z", f.startAt))
			}
			s.StartAt = t
		case f.startIn < 0:
			problems = append(problems, fmt.Sprintf("--start-in %s must be positive", f.startIn))
		case f.startIn > 0:
			s.StartAt = time.Now().Add(f.startIn).UTC().Truncate(time.Second)
		}
	}
	if m := s.Missing(job); len(m) > 0 {
		if f.startAt != "" {
			m = removeStart(m)
		}
		if len(m) > 0 {
			problems = append([]string{fmt.Sprintf("missing required flags: %s (see 'scalelab kube %s --help')", strings.Join(m, ", "), what)}, problems...)
		}
	}
	if err := checkKubeRunArgs(what, runArgs, s.Segments); err != nil {
		problems = append(problems, "after --: "+err.Error())
	}
	switch len(problems) {
	case 0:
	case 1:
		return usageErr("kube %s: %s", what, problems[0])
	default:
		return usageErr("kube %s: %d problems:\n  %s", what, len(problems), strings.Join(problems, "\n  "))
	}
	s.RunArgs = runArgs
	comment := fmt.Sprintf("rendered by scalelab %s: scalelab kube %s", Version(), what)
	var out []byte
	if job {
		j, err := kube.IndexedJob(s)
		if err != nil {
			return usageErr("kube job: %v", strings.TrimPrefix(err.Error(), kube.ErrSpec.Error()+": "))
		}
		if f.startIn > 0 {
			fmt.Fprintf(stderr, "scalelab: the segments start at %s\n", s.StartAt.Format(time.RFC3339))
		}
		comment += fmt.Sprintf("\n%d segments starting at %s; apply after the setup Job completed; results in %s/%s/shard-I", s.Segments, s.StartAt.UTC().Format(time.RFC3339), s.ResultsPath, s.Name)
		if out, err = kube.YAML(j, comment); err != nil {
			return fmt.Errorf("kube job: %w", err)
		}
	} else {
		j, err := kube.SetupJob(s)
		if err != nil {
			return usageErr("kube setup: %v", strings.TrimPrefix(err.Error(), kube.ErrSpec.Error()+": "))
		}
		comment += "\nloads the data once; apply it, then: kubectl wait --for=condition=complete job/" + j.Name
		if out, err = kube.YAML(j, comment); err != nil {
			return fmt.Errorf("kube setup: %w", err)
		}
	}
	_, err := stdout.Write(out)
	return err
}

// removeStart drops the missing --start-at entry (a --start-at was given,
// if unreadable).
func removeStart(m []string) []string {
	var out []string
	for _, s := range m {
		if !strings.HasPrefix(s, "--start-at") {
			out = append(out, s)
		}
	}
	return out
}

// checkKubeRunArgs checks the run arguments of the pods as `scalelab run`
// would: the renderer's own rules (no password, no flag it sets), then
// the run flags, scenario, settings and load through the run's own parser
// and plan, for each pod's segment. Local clusters are refused: the pods cannot reach them.
func checkKubeRunArgs(what string, args []string, segments int) error {
	if err := kube.CheckRunArgs(args); err != nil {
		return err
	}
	f, given, scen, err := parseRunArgs(args)
	if err != nil {
		return err
	}
	for _, cl := range []struct{ flag, name string }{{"cluster", f.cluster}, {"cache-cluster", f.cacheCl}} {
		if cl.name != "" {
			return usageErr("--%s %s: local clusters (scalelab cluster up) live on this machine and the pods cannot reach them; give the servers' addresses with --target (and --cache-target)", cl.flag, cl.name)
		}
	}
	if what == "setup" {
		f.loadOnly = true
	}
	if what != "job" || segments <= 0 {
		_, err = f.plan(scen, given, nil)
		return err
	}
	// Every pod's segment: one may be left no users or no rate.
	for i := range segments {
		if _, err := f.plan(scen, given, &segment.Segment{Index: i, Count: segments}); err != nil {
			return err // it names the segment
		}
	}
	return nil
}
