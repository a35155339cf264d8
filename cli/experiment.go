package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scalelab/scalelab/experiment"
	"github.com/scalelab/scalelab/slo"
	"github.com/scalelab/scalelab/termtable"
)

// experimentCmd is `scalelab experiment` and its subcommands.
func experimentCmd() *cobra.Command {
	c := groupCmd(&cobra.Command{
		Use:   "experiment COMMAND",
		Short: "run a matrix with repeats and statistics, or a knee search",
		Long: `An experiment runs a matrix of combinations with repeats, compares each with the baseline (95%
CIs, Welch's t-test) and checks the SLO; a knee search raises users or rate until the SLO breaks.
See docs/experiments.md and examples/. Exit codes: 0 ok, 1 an SLO or check failed, 2 bad file or
flags, 3 interrupted, 4 runs could not finish.`,
		Example: `  scalelab experiment validate examples/social-mixes.yaml
  scalelab experiment run examples/social-mixes.yaml
  scalelab experiment knee examples/mhealth-knee.yaml
  scalelab experiment show scalelab-results/EXPERIMENT`,
	})
	c.AddCommand(experimentRunCmd(false), experimentRunCmd(true), experimentValidateCmd(), experimentShowCmd())
	return c
}

// experimentFlags are the flags of `experiment run` and `experiment knee`.
type experimentFlags struct {
	name              string
	out, profile      string
	repeats           int
	slos              []string
	dryRun            bool
	on, precision     string
	start, max        float64
	searchGiven, knee bool
}

// completeYAML completes the experiment file.
func completeYAML(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// experimentRunCmd is `experiment run`, or `experiment knee` with knee.
func experimentRunCmd(knee bool) *cobra.Command {
	f := &experimentFlags{name: "run", knee: knee}
	c := &cobra.Command{
		Use:   "run FILE.yaml",
		Short: "run the matrix of combinations with repeats, compare each with the baseline",
		Long: `Runs the combinations of the experiment file, each repeated (a fixed number, or until the 95% CI
is narrow enough), compares each with its baseline and checks the SLO; writes experiment.json and
report.html in the results directory.`,
		Example: `  scalelab experiment run examples/social-mixes.yaml
  scalelab experiment run examples/mhealth-vertical.yaml --profile study --out results/vertical
  scalelab experiment run examples/social-mixes.yaml --dry-run`,
		Args:              exactArgs(1, "one FILE.yaml"),
		ValidArgsFunction: completeYAML,
		RunE: func(c *cobra.Command, args []string) error {
			f.searchGiven = c.Flags().Changed("on") || c.Flags().Changed("start") || c.Flags().Changed("max") || c.Flags().Changed("precision")
			if c.Flags().Changed("repeats") && f.repeats < 1 {
				return usageErr("experiment %s: --repeats %d: at least 1 (leave it out for the file's rule)", f.name, f.repeats)
			}
			return experimentRun(c.Context(), args[0], f, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	if knee {
		f.name = "knee"
		c.Use = "knee FILE.yaml"
		c.Short = "find the highest load (users or rate) that meets the SLO"
		c.Long = `Raises the load (users or rate) of the experiment file until the SLO breaks, then bisects the
bracket to --precision: the knee. Without search flags, the file's search: block decides.`
		c.Example = `  scalelab experiment knee examples/mhealth-knee.yaml
  scalelab experiment knee examples/mhealth-knee.yaml --on users --start 8 --max 512 --precision 10%`
	}
	addGroup(c, "Experiment", func(fs *pflag.FlagSet) {
		fs.StringVar(&f.out, "out", "", "results directory (default: the file's results:, else scalelab-results/NAME-TIME)")
		fs.StringVar(&f.profile, "profile", "", "apply one of the file's profiles (e.g. study, to run at the study's size)")
		fs.IntVar(&f.repeats, "repeats", 0, "a fixed number of repeats, overriding the file's rule")
		fs.StringArrayVar(&f.slos, "slo", nil, "an SLO added to the file's (repeatable), e.g. 'p95<1s for read'")
		if !knee {
			fs.BoolVar(&f.dryRun, "dry-run", false, "check the file and print the runs it makes, without running")
		}
	})
	if knee {
		addGroup(c, "Knee search", func(fs *pflag.FlagSet) {
			fs.StringVar(&f.on, "on", "", "what the search raises: users|rate (default: from the load model)")
			fs.Float64Var(&f.start, "start", 0, "first load (default: the file's users, or 100/s)")
			fs.Float64Var(&f.max, "max", 0, "highest load tried (default 1024 users, or 1024 x start)")
			fs.StringVar(&f.precision, "precision", "", "stop bisecting when the bracket is within this fraction, e.g. 10%")
		})
		choices(c, "on", "users", "rate")
	}
	_ = c.RegisterFlagCompletionFunc("out", completeDirs)
	return c
}

// experimentValidateCmd is `experiment validate`.
func experimentValidateCmd() *cobra.Command {
	var profile string
	c := &cobra.Command{
		Use:               "validate FILE.yaml",
		Aliases:           []string{"plan"},
		Short:             "check the file and print the runs it makes",
		Example:           "  scalelab experiment validate examples/social-mixes.yaml --profile study",
		Args:              exactArgs(1, "one FILE.yaml"),
		ValidArgsFunction: completeYAML,
		RunE: func(c *cobra.Command, args []string) error {
			return experimentValidate(args[0], profile, c.OutOrStdout())
		},
	}
	c.Flags().StringVar(&profile, "profile", "", "apply one of the file's profiles")
	return c
}

// experimentShowCmd is `experiment show`.
func experimentShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "show DIR",
		Short:             "print a finished experiment's tables",
		Example:           "  scalelab experiment show scalelab-results/EXPERIMENT",
		Args:              exactArgs(1, "one results DIR"),
		ValidArgsFunction: completeDirs,
		RunE: func(c *cobra.Command, args []string) error {
			return experimentShow(args[0], c.OutOrStdout())
		},
	}
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

func experimentRun(ctx context.Context, file string, f *experimentFlags, stdout, stderr io.Writer) error {
	if f.repeats < 0 {
		return usageErr("experiment %s: --repeats %d must be positive", f.name, f.repeats)
	}
	s, err := loadSpec(file, f.profile, f.slos)
	if err != nil {
		return err
	}
	knee := f.knee || s.Search != nil
	opts := experiment.Options{Out: f.out, Repeats: f.repeats, Knee: f.knee, Stdout: stdout, Stderr: stderr, Args: os.Args}
	if knee && (f.searchGiven || f.repeats > 0) {
		if opts.Search, err = searchFlags(f); err != nil {
			return err
		}
		opts.Repeats = 0
	}
	if f.dryRun {
		var sr *experiment.Search
		if knee {
			sr = &experiment.Search{}
			if opts.Search != nil {
				sr = opts.Search
			}
		}
		return printPlan(stdout, s, f.repeats, sr)
	}
	_, err = experiment.Run(ctx, s, opts)
	return err
}

// searchFlags is the knee search the flags give (--on, --start, --max,
// --precision, --repeats), over the file's search:.
func searchFlags(f *experimentFlags) (*experiment.Search, error) {
	sr := &experiment.Search{On: f.on, Start: f.start, Max: f.max, Repeats: f.repeats}
	if f.precision != "" {
		p, err := strconv.ParseFloat(strings.TrimSuffix(f.precision, "%"), 64)
		if err != nil || !strings.HasSuffix(f.precision, "%") || p <= 0 || p > 100 {
			return nil, usageErr("experiment knee: --precision %q; allowed: a percentage such as 10%%", f.precision)
		}
		sr.Precision = p / 100
	}
	if f.on != "" {
		if err := enumFlag("experiment knee", "on", f.on, []string{"users", "rate"}); err != nil {
			return nil, err
		}
	}
	return sr, nil
}

func experimentValidate(file, profile string, stdout io.Writer) error {
	s, err := loadSpec(file, profile, nil)
	if err != nil {
		return err
	}
	var sr *experiment.Search
	if s.Search != nil {
		sr = &experiment.Search{}
	}
	return printPlan(stdout, s, 0, sr)
}

// printPlan shows the combinations a valid file makes; search is the
// knee search's flags (nil: not a knee search).
func printPlan(w io.Writer, s *experiment.Spec, repeats int, search *experiment.Search) error {
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
	if err := planRuns(w, s, repeats, search); err != nil {
		return err
	}
	tab := termtable.Table{Header: []string{"id", "combination", "vs", "engine", "cluster"}, Keys: 2, Indent: "  "}
	var commands []string
	names := experiment.PlanNames(combos) // the clusters the experiment starts
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
		o := s.RunOptions(c, 1, "DIR", names[c.ID])
		vs := c.ComparedTo
		if c.Baseline {
			vs = "-"
		}
		tab.Rows = append(tab.Rows, []string{id, c.Label, vs, c.Engine, cl})
		commands = append(commands, shellLines(c.ID+": scalelab "+strings.Join(o.Args[1:], " "), termtable.Width, "  ", "      "))
	}
	_ = tab.Write(w, termtable.Width)
	fmt.Fprintln(w, "* baseline (vs: the combination each is compared with)")
	fmt.Fprintln(w, "commands (repeat 1):")
	if plan := hasPlanNames(names); plan != "" {
		fmt.Fprintf(w, "  (%s: the cluster the experiment starts for that combination and those sharing it)\n", plan)
	}
	for _, c := range commands {
		fmt.Fprint(w, c)
	}
	return nil
}

// planRuns prints how often the combinations run (a knee search's runs
// per step), the SLO, the search and the estimate of the plan.
func planRuns(w io.Writer, s *experiment.Spec, repeats int, search *experiment.Search) error {
	var sr experiment.Search
	var err error
	if search != nil {
		if sr, err = s.KneeSearch(search); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	r := s.Repeats
	switch {
	case search != nil:
		fmt.Fprintf(w, "repeats: %d per load step, order %s\n", sr.Repeats, s.Order)
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
	e, err := s.Estimate(repeats)
	if search != nil {
		fmt.Fprintf(w, "knee search on %s from %g to %g, precision %g%%\n", sr.On, sr.Start, sr.Max, 100*sr.Precision)
		e, err = s.EstimateSearch(sr)
	}
	if err == nil {
		for i, l := range wrap("runs: "+e.String(), termtable.Width-2) {
			if i > 0 {
				l = "  " + l
			}
			fmt.Fprintln(w, l)
		}
	}
	return nil
}

func experimentShow(dir string, stdout io.Writer) error {
	r, err := experiment.ReadResult(dir)
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

// shellLines breaks a command at spaces into lines of at most width
// columns, each but the last ending in " \\" (so it pastes into a shell);
// the first line starts with first, the others with next.
func shellLines(cmd string, width int, first, next string) string {
	var words []string // a flag with its value stays on one line
	for _, w := range strings.Fields(cmd) {
		if n := len(words); n > 0 && strings.HasPrefix(words[n-1], "--") && !strings.Contains(words[n-1], "=") && !strings.HasPrefix(w, "-") {
			words[n-1] += " " + w
			continue
		}
		words = append(words, w)
	}
	var b strings.Builder
	line := first
	for i, word := range words {
		if i > 0 && len(line)+1+len(word)+2 > width {
			b.WriteString(line + " \\\n")
			line = next + word
			continue
		}
		if i > 0 {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
	return b.String()
}

// hasPlanNames is an example of the placeholder cluster names the plan's
// commands use, "" for none.
func hasPlanNames(names map[string]experiment.ClusterNames) string {
	for _, n := range names {
		if n.Run != "" {
			return "CLUSTER_cNN"
		}
		if n.Cache != "" {
			return "CACHE_cNN"
		}
	}
	return ""
}
