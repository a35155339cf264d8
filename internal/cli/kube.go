package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/scalelab/scalelab/kube"
)

const kubeUsage = `Usage: scalelab kube job   [flags] -- SCENARIO [run flags]
       scalelab kube setup [flags] -- SCENARIO [run flags]

Renders, on stdout, the Kubernetes manifests of a divided test
(docs/kubernetes.md). 'job' is an Indexed Job of --segments pods: pod I runs
'scalelab run SCENARIO [run flags] --segment I/N --start-at T' and writes
its results directory to RESULTS/NAME/shard-I on the --results-claim volume;
a failed segment is not run again. 'setup' is the Job that loads the data
once ('scalelab run SCENARIO [run flags] --load-only'): apply it first and
wait for it. Collect the shard directories and add them with
'scalelab merge'. Passwords never go into a manifest: keep them in a Secret
(--env-from-secret).
`

// kubeCmd is `scalelab kube`.
func kubeCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "job" && args[0] != "setup") {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
			fmt.Fprint(stdout, kubeUsage)
			return nil
		}
		fmt.Fprint(stderr, kubeUsage)
		return usageErr("kube: want 'kube job' or 'kube setup'")
	}
	what := args[0]
	flagArgs, runArgs := args[1:], []string(nil)
	for i, a := range flagArgs {
		if a == "--" {
			flagArgs, runArgs = flagArgs[:i], flagArgs[i+1:]
			break
		}
	}
	fs := flag.NewFlagSet("kube "+what, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var s kube.Spec
	var startAt string
	var startIn time.Duration
	fs.StringVar(&s.Name, "name", "", "the Job's name (a DNS-1123 label); the setup Job is NAME-setup")
	fs.StringVar(&s.Image, "image", "", "a scalelab image, built from the repository's Dockerfile")
	fs.StringVar(&s.Namespace, "namespace", "", "the namespace (default: kubectl's)")
	fs.StringVar(&s.ResultsClaim, "results-claim", "", "a PersistentVolumeClaim the results directories are written to")
	fs.StringVar(&s.ResultsPath, "results-path", kube.DefaultResultsPath, "where the claim is mounted in the pods")
	fs.StringVar(&s.CPU, "cpu", "", "CPU request and limit per pod (2, 500m)")
	fs.StringVar(&s.Memory, "memory", "", "memory request and limit per pod (1Gi)")
	fs.StringVar(&s.ServiceAccount, "service-account", "", "the pods' service account")
	fs.StringVar(&s.PullPolicy, "pull-policy", "", "image pull policy: Always|IfNotPresent|Never")
	fs.StringVar(&s.EnvFromSecret, "env-from-secret", "", "a Secret whose keys become the pods' environment (PGPASSWORD, ...)")
	if what == "job" {
		fs.IntVar(&s.Segments, "segments", 0, "segments: pods of the Indexed Job, each running one share of the test")
		fs.StringVar(&startAt, "start-at", "", "the instant every segment starts its load (RFC 3339)")
		fs.DurationVar(&startIn, "start-in", 0, "start the load this long after now (instead of --start-at); leave time for the pods to be scheduled and pull the image")
	}
	if err := fs.Parse(flagArgs); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, kubeUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil
		}
		return usageErr("kube %s: %v; see 'scalelab kube --help'", what, err)
	}
	if fs.NArg() > 0 {
		return usageErr("kube %s: unexpected %q: the run's scenario and flags go after --", what, strings.Join(fs.Args(), " "))
	}
	s.RunArgs = runArgs
	comment := fmt.Sprintf("rendered by scalelab %s: scalelab kube %s", Version(), what)
	var out []byte
	switch what {
	case "job":
		switch {
		case startAt != "" && startIn != 0:
			return usageErr("kube job: --start-at and --start-in are exclusive")
		case startAt != "":
			t, err := time.Parse(time.RFC3339Nano, startAt)
			if err != nil {
				return usageErr("kube job: --start-at %q: want an RFC 3339 time with its zone, e.g. 2026-11-24T10:00:00Z", startAt)
			}
			s.StartAt = t
		case startIn > 0:
			s.StartAt = time.Now().Add(startIn).UTC().Truncate(time.Second)
			fmt.Fprintf(stderr, "scalelab: the segments start at %s\n", s.StartAt.Format(time.RFC3339))
		}
		j, err := kube.IndexedJob(s)
		if err != nil {
			return usageErr("kube job: %v", strings.TrimPrefix(err.Error(), kube.ErrSpec.Error()+": "))
		}
		comment += fmt.Sprintf("\n%d segments starting at %s; apply after the setup Job completed; results in %s/%s/shard-I", s.Segments, s.StartAt.UTC().Format(time.RFC3339), s.ResultsPath, s.Name)
		if out, err = kube.YAML(j, comment); err != nil {
			return fmt.Errorf("kube job: %w", err)
		}
	case "setup":
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
