package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scalelab/scalelab/study"
)

// studyCmd is `scalelab study` and its subcommands.
func studyCmd() *cobra.Command {
	c := groupCmd(&cobra.Command{
		Use:   "study COMMAND",
		Short: "re-run a published study's experiments and set the results beside its figures",
		Long: `The five studies scalelab reproduces (docs/studies.md), their published figures kept as data in
studies/ and built into the binary. "study run" runs a study's experiments (examples/) with their
clusters, app and cache tiers, then writes a page with a row per finding: the study's figures,
scalelab's with 95% CIs, the ratio the finding is about and a verdict (agrees, disagrees, not
significant here, not reproducible here). Absolute times are not comparable; directions are.`,
		Example: `  scalelab study list
  scalelab study run 002 --profile quick
  scalelab study show scalelab-results/study-002-search-TIME`,
	})
	c.AddCommand(studyListCmd(), studyRunCmd(), studyShowCmd())
	return c
}

// studyListCmd is `study list`.
func studyListCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "the studies, what each asked and which experiments reproduce it",
		Example: "  scalelab study list",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return studyList(c.OutOrStdout())
		},
	}
}

func studyList(w io.Writer) error {
	all, err := study.All()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tFINDINGS\tEXPERIMENTS (quick | full profile)")
	for _, s := range all {
		var exps []string
		for _, e := range s.Experiments {
			exps = append(exps, fmt.Sprintf("examples/%s (%s | %s)", e.Example, orDefault(e.Profiles["quick"]), orDefault(e.Profiles["full"])))
		}
		measured := 0
		for _, f := range s.Findings {
			if f.NotReproducible == "" {
				measured++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d (%d measured here)\t%s\n", s.ID, s.Name, len(s.Findings), measured, strings.Join(exps, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range all {
		fmt.Fprintf(w, "\n%s %s: %s\n  %s\n", s.ID, s.Name, s.Title, s.Question)
	}
	return nil
}

func orDefault(p string) string {
	if p == "" {
		return "as is"
	}
	return "profile " + p
}

// studyRunCmd is `study run`.
func studyRunCmd() *cobra.Command {
	var profile, out string
	c := &cobra.Command{
		Use:   "run ID",
		Short: "run a study's experiments, then write its page",
		Long: `Runs every experiment of the study (its examples/ files at the profile's size, each with the
clusters, app servers and caches the file starts), with a progress line and an ETA, then writes
study.json, study.html and study.md in the results directory and prints the table.`,
		Example: `  scalelab study run 002 --profile quick
  scalelab study run 004 --profile quick --out results/whispr`,
		Args:              exactArgs(1, "one study ID (scalelab study list)"),
		ValidArgsFunction: completeStudies,
		RunE: func(c *cobra.Command, args []string) error {
			return studyRun(c.Context(), args[0], profile, out, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	addGroup(c, "Study", func(fs *pflag.FlagSet) {
		fs.StringVar(&profile, "profile", "quick", "quick (the experiments' short runs) or full (the study's size)")
		fs.StringVar(&out, "out", "", "results directory (default scalelab-results/study-ID-NAME-TIME)")
	})
	choices(c, "profile", study.Profiles...)
	_ = c.RegisterFlagCompletionFunc("out", completeDirs)
	return c
}

// completeStudies completes a study's id.
func completeStudies(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	all, err := study.All()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var ids []string
	for _, s := range all {
		ids = append(ids, s.ID+"\t"+s.Name)
	}
	return ids, cobra.ShellCompDirectiveNoFileComp
}

func studyRun(ctx context.Context, id, profile, out string, stdout, stderr io.Writer) error {
	all, err := study.All()
	if err != nil {
		return err
	}
	st, err := study.Find(all, id)
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("study run: %w", err))
	}
	// The command as the user would type it: the program by its name, not
	// the path it was started from.
	args := append([]string{"scalelab"}, os.Args[1:]...)
	_, _, err = study.Run(ctx, st, study.RunOptions{Profile: profile, Out: out, Stdout: stdout, Stderr: stderr, Args: args})
	return err
}

// studyShowCmd is `study show`.
func studyShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "show DIR",
		Short:             "rebuild a study's page (terminal and HTML) from its results",
		Example:           "  scalelab study show scalelab-results/study-002-search-TIME",
		Args:              exactArgs(1, "one study results DIR"),
		ValidArgsFunction: completeDirs,
		RunE: func(c *cobra.Command, args []string) error {
			p, err := study.Build(args[0])
			if err != nil {
				return withCode(ExitUsage, err)
			}
			return p.Write(args[0], c.OutOrStdout())
		},
	}
}
