package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// listCmd is `scalelab list`.
func listCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list [WHAT [NAME]]",
		Short: "list scenarios, engines, load models, settings and cluster options",
		Long: `Lists what this build offers, readable at 100 columns: scenarios and the engines each supports,
engines, load models and their flags, every setting (type, default, allowed values,
description), and the engines that start local clusters. WHAT is one of: scenarios, engines,
models, settings, clusters; NAME narrows the settings to one engine or scenario, and the clusters
to the options of one engine's clusters (cluster up ENGINE --opt KEY=VALUE).`,
		Example: `  scalelab list                      # everything
  scalelab list scenarios            # scenarios and the engines each supports
  scalelab list settings postgres    # only the settings of one engine or scenario
  scalelab list cluster memcached    # the options of memcached clusters`,
		Args: cobra.ArbitraryArgs,
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			switch {
			case len(args) == 0:
				return listSections, cobra.ShellCompDirectiveNoFileComp
			case len(args) == 1 && strings.HasPrefix(args[0], "setting"):
				return append(engine.Names(), scenario.Names()...), cobra.ShellCompDirectiveNoFileComp
			case len(args) == 1 && strings.HasPrefix(args[0], "cluster"):
				return cluster.Provisioners(), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error { return list(args, c.OutOrStdout()) },
	}
}

// listSections are the WHAT arguments of `scalelab list`.
var listSections = []string{"scenarios", "engines", "models", "settings", "clusters"}

// list prints scenarios, engines, load models and settings, all of them
// or the section (and, for settings, the engine or scenario) asked for.
func list(args []string, w io.Writer) error {
	what, name := "", ""
	switch len(args) {
	case 0:
	case 1, 2:
		what = args[0]
		if what == "scenario" || what == "engine" || what == "model" || what == "setting" || what == "cluster" {
			what += "s"
		}
		if !contains(listSections, what) {
			msg := fmt.Sprintf("list: unknown section %q; allowed: %s", args[0], strings.Join(listSections, ", "))
			if n := setting.Nearest(args[0], listSections); n != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", n)
			}
			return usageErr("%s", msg)
		}
		if len(args) == 2 {
			if what != "settings" && what != "clusters" {
				return usageErr("list %s takes no NAME; 'list settings NAME' narrows to an engine or scenario, 'list cluster ENGINE' to the options of its clusters", what)
			}
			name = args[1]
		}
	default:
		return usageErr("list: at most WHAT and NAME expected, got %q; usage: scalelab list [WHAT [NAME]]", args)
	}
	all := what == ""
	if all || what == "scenarios" {
		fmt.Fprintln(w, "SCENARIOS")
		for _, n := range scenario.Names() {
			s, _ := scenario.Lookup(n)
			desc := s.Description() + " (engines: " + strings.Join(s.Engines(), ", ") + ")"
			if tu, ok := s.(scenario.TierUser); ok {
				for _, t := range tu.Tiers() {
					desc += "; --" + t.Role + " ENGINE: " + t.Description
				}
			}
			writeEntry(w, n, desc)
		}
	}
	if all || what == "engines" {
		sep(w, all)
		fmt.Fprintln(w, "ENGINES")
		for _, n := range engine.Names() {
			e, _ := engine.Lookup(n)
			writeEntry(w, n, e.Description())
		}
	}
	if all || what == "models" {
		sep(w, all)
		fmt.Fprintln(w, "LOAD MODELS")
		for _, m := range load.Models {
			writeEntry(w, m.Name, m.Usage)
		}
	}
	if all || what == "settings" {
		if err := listSettings(w, name, all); err != nil {
			return err
		}
	}
	if all || what == "clusters" {
		return listClusters(w, name, all)
	}
	return nil
}

// listSettings prints every setting, or those of the engine or scenario
// name, one block per setting.
func listSettings(w io.Writer, name string, all bool) error {
	type owner struct {
		kind, name string
		specs      []setting.Spec
	}
	var owners []owner
	for _, n := range engine.Names() {
		e, _ := engine.Lookup(n)
		owners = append(owners, owner{"engine", n, e.Settings()})
	}
	for _, n := range scenario.Names() {
		s, _ := scenario.Lookup(n)
		owners = append(owners, owner{"scenario", n, s.Settings()})
	}
	owners = append(owners, owner{"load model", "phases", runner.BreakSettings()})
	if name != "" {
		var names []string
		var keep []owner
		for _, o := range owners {
			names = append(names, o.name)
			if o.name == name {
				keep = append(keep, o)
			}
		}
		if len(keep) == 0 {
			msg := fmt.Sprintf("list settings: no engine, scenario or load model %q; allowed: %s", name, strings.Join(names, ", "))
			if n := setting.Nearest(name, names); n != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", n)
			}
			return usageErr("%s", msg)
		}
		owners = keep
	}
	sep(w, all)
	fmt.Fprintln(w, "SETTINGS (--set key=value)")
	for _, o := range owners {
		if len(o.specs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s %s\n", o.kind, o.name)
		for _, sp := range o.specs {
			writeSpec(w, sp)
		}
	}
	return nil
}

// writeEntry prints a name and its description wrapped under it at
// helpWidth columns.
func writeEntry(w io.Writer, name, desc string) {
	fmt.Fprintf(w, "  %s\n", name)
	for _, line := range wrap(desc, helpWidth-6) {
		fmt.Fprintln(w, "      "+line)
	}
}

// sep prints a blank line between sections of the full listing.
func sep(w io.Writer, all bool) {
	if all {
		fmt.Fprintln(w)
	}
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
