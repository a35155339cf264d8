package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/scalelab/scalelab/experiment"
	"github.com/scalelab/scalelab/slo"
)

const experimentUsage = `Usage:
  scalelab experiment run FILE.yaml [--out DIR] [--profile NAME] [--repeats N] [--slo S] [--dry-run]
  scalelab experiment knee FILE.yaml [--on users|rate] [--start N] [--max N] [--precision 10%]
                                     [--repeats N] [--slo S]
  scalelab experiment validate FILE.yaml [--profile NAME]
                                     check the file and print the runs it makes
  scalelab experiment show DIR                               print a finished experiment's tables
An experiment runs a matrix of combinations with repeats, compares each with the
baseline (95% CIs, Welch's t-test) and checks the SLO; a knee search raises users
or rate until the SLO breaks. See docs/experiments.md and examples/.
Exit codes: 0 ok, 1 an SLO or check failed, 2 bad file or flags, 3 interrupted,
4 runs could not finish.
`

// experimentCmd dispatches the experiment subcommands.
func experimentCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, experimentUsage)
		return usageErr("experiment: no subcommand given (run, knee, validate, show)")
	}
	switch args[0] {
	case "run":
		return experimentRun(ctx, args[1:], false, stdout, stderr)
	case "knee":
		return experimentRun(ctx, args[1:], true, stdout, stderr)
	case "validate", "plan":
		return experimentValidate(args[1:], stdout)
	case "show":
		return experimentShow(args[1:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, experimentUsage)
		return nil
	}
	return usageErr("experiment: unknown subcommand %q; allowed: run, knee, validate, show", args[0])
}

// experimentFlags are the flags of `experiment run` and `experiment knee`.
type experimentFlags struct {
	out, profile      string
	repeats           int
	slos              multiFlag
	dryRun            bool
	on, precision     string
	start, max        float64
	searchGiven, knee bool
}

func parseExperimentFlags(name string, args []string, knee bool) (*experimentFlags, string, error) {
	f := &experimentFlags{knee: knee}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.out, "out", "", "results directory (default: the file's results:, else scalelab-results/NAME-TIME)")
	fs.StringVar(&f.profile, "profile", "", "apply one of the file's profiles (e.g. study, to run at the study's size)")
	fs.IntVar(&f.repeats, "repeats", 0, "a fixed number of repeats, overriding the file's rule")
	fs.Var(&f.slos, "slo", "an SLO added to the file's (repeatable), e.g. 'p95<1s for read'")
	if knee {
		fs.StringVar(&f.on, "on", "", "what the search raises: users|rate (default: from the load model)")
		fs.Float64Var(&f.start, "start", 0, "first load (default: the file's users, or 100/s)")
		fs.Float64Var(&f.max, "max", 0, "highest load tried (default 1024 users, or 1024 x start)")
		fs.StringVar(&f.precision, "precision", "", "stop bisecting when the bracket is within this fraction, e.g. 10%")
	} else {
		fs.BoolVar(&f.dryRun, "dry-run", false, "check the file and print the runs it makes, without running")
	}
	pos, err := splitPositional(fs, args)
	if err != nil {
		return nil, "", usageErr("experiment %s: %v\n%s", name, err, experimentUsage)
	}
	if len(pos) != 1 {
		return nil, "", usageErr("experiment %s: one FILE.yaml expected, got %q", name, pos)
	}
	if f.repeats < 0 {
		return nil, "", usageErr("experiment %s: --repeats %d must be positive", name, f.repeats)
	}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "on", "start", "max", "precision":
			f.searchGiven = true
		}
	})
	return f, pos[0], nil
}

// loadSpec reads a file and adds --slo objectives.
func loadSpec(file, profile string, slos []string) (*experiment.Spec, error) {
	s, err := experiment.Load(file, profile)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	exprs, err := slo.ParseList(slos)
	if err != nil {
		return nil, withCode(ExitUsage, fmt.Errorf("--slo: %w", err))
	}
	for _, e := range exprs {
		s.SLO = append(s.SLO, experiment.SLO{Expr: e})
	}
	return s, nil
}

func experimentRun(ctx context.Context, args []string, knee bool, stdout, stderr io.Writer) error {
	name := "run"
	if knee {
		name = "knee"
	}
	f, file, err := parseExperimentFlags(name, args, knee)
	if err != nil {
		return err
	}
	s, err := loadSpec(file, f.profile, f.slos)
	if err != nil {
		return err
	}
	if f.dryRun {
		return printPlan(stdout, s, f.repeats)
	}
	opts := experiment.Options{Out: f.out, Repeats: f.repeats, Knee: knee, Stdout: stdout, Stderr: stderr, Args: os.Args}
	if knee && (f.searchGiven || f.repeats > 0) {
		sr := &experiment.Search{On: f.on, Start: f.start, Max: f.max, Repeats: f.repeats}
		if f.precision != "" {
			p, err := strconv.ParseFloat(strings.TrimSuffix(f.precision, "%"), 64)
			if err != nil || !strings.HasSuffix(f.precision, "%") || p <= 0 || p > 100 {
				return usageErr("experiment knee: --precision %q; allowed: a percentage such as 10%%", f.precision)
			}
			sr.Precision = p / 100
		}
		if f.on != "" && f.on != "users" && f.on != "rate" {
			return usageErr("experiment knee: --on %q; allowed: users|rate", f.on)
		}
		opts.Search = sr
		opts.Repeats = 0
	}
	_, err = experiment.Run(ctx, s, opts)
	return err
}

func experimentValidate(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	profile := fs.String("profile", "", "apply one of the file's profiles")
	pos, err := splitPositional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("experiment validate: one FILE.yaml expected, got %q", pos)
	}
	s, err := loadSpec(pos[0], *profile, nil)
	if err != nil {
		return err
	}
	return printPlan(stdout, s, 0)
}

// printPlan shows the combinations a valid file makes.
func printPlan(w io.Writer, s *experiment.Spec, repeats int) error {
	combos, err := s.Matrix()
	if err != nil {
		return withCode(ExitUsage, err)
	}
	fmt.Fprintf(w, "%s: experiment %s, scenario %s, %d combinations\n", s.File, s.Name, s.Scenario.Text, len(combos))
	if s.Profile != "" {
		fmt.Fprintf(w, "profile: %s\n", s.Profile)
	} else if len(s.Profiles) > 0 {
		fmt.Fprintf(w, "profiles (--profile): %s\n", strings.Join(s.Profiles, ", "))
	}
	r := s.Repeats
	switch {
	case repeats > 0:
		fmt.Fprintf(w, "repeats: %d (--repeats), order %s\n", repeats, s.Order)
	case r.Fixed > 0:
		fmt.Fprintf(w, "repeats: %d, order %s\n", r.Fixed, s.Order)
	default:
		fmt.Fprintf(w, "repeats: until the 95%% CI of %s is within %g%% (%d to %d), order %s\n", r.Metric, 100*r.UntilCIWithin, r.Min, r.Max, s.Order)
	}
	var objs []string
	for _, e := range s.SLO {
		objs = append(objs, e.Expr.Text)
	}
	if len(objs) > 0 {
		fmt.Fprintf(w, "slo: %s\n", strings.Join(objs, ", "))
	}
	if s.Search != nil {
		fmt.Fprintf(w, "knee search on %s from %g to %g\n", s.Search.On, s.Search.Start, s.Search.Max)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  id\tcombination\tvs\tengine\tcluster\tcommand (repeat 1)")
	for _, c := range combos {
		id := c.ID
		if c.Baseline {
			id += "*"
		}
		var parts []string
		if c.Cluster != nil {
			cl := plural(max(c.Cluster.Nodes, 1), "node")
			if c.Cluster.Replicas > 0 {
				cl += " + " + plural(c.Cluster.Replicas, "replica")
			}
			parts = append(parts, cl)
		}
		if c.App != nil {
			n := c.App.Nodes
			if n == 0 {
				n = 2
			}
			cl := plural(n, "app server")
			if nw := c.App.NetworkText(); nw != "" {
				cl += " (" + nw + ")"
			}
			parts = append(parts, cl)
		}
		if c.Cache != nil {
			parts = append(parts, c.Cache.Engine+" cache")
		}
		cl := "-"
		if len(parts) > 0 {
			cl = strings.Join(parts, ", ")
		}
		names := experiment.ClusterNames{}
		if c.Cache != nil {
			names.Cache = "CACHE" // the cluster the experiment starts
		}
		o := s.RunOptions(c, 1, "DIR", names)
		vs := c.ComparedTo
		if c.Baseline {
			vs = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", id, c.Label, vs, c.Engine, cl, strings.Join(o.Args[1:], " "))
	}
	tw.Flush()
	fmt.Fprintln(w, "* baseline (vs: the combination each is compared with)")
	return nil
}

func experimentShow(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return usageErr("experiment show: one results DIR expected, got %q", args)
	}
	r, err := experiment.ReadResult(args[0])
	if err != nil {
		return withCode(ExitUsage, err)
	}
	fmt.Fprintf(stdout, "experiment %s (%s), status %s, %d runs\n", r.Name, r.Scenario, r.Status, r.Totals.Runs)
	experiment.WriteTable(stdout, r)
	return nil
}

// plural is "1 node", "2 nodes".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
