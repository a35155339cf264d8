package cli

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// completionCmd is `scalelab completion SHELL`.
func completionCmd(root *cobra.Command) *cobra.Command {
	shells := []string{"bash", "zsh", "fish", "powershell"}
	return &cobra.Command{
		Use:   "completion SHELL",
		Short: "print a shell completion script (bash, zsh, fish, powershell)",
		Long: `Prints a script that makes the shell complete scalelab's commands, flags, scenario, engine,
load model and setting names (--set KEY=VALUE, the values too) and the names of local clusters.
Load it in the current shell, or install it where the shell looks for completions.`,
		Example: `  source <(scalelab completion bash)                         # this bash session
  scalelab completion bash > /etc/bash_completion.d/scalelab   # every bash session
  scalelab completion zsh > "${fpath[1]}/_scalelab"            # zsh (with compinit)
  scalelab completion fish > ~/.config/fish/completions/scalelab.fish`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 || !contains(shells, args[0]) {
				msg := fmt.Sprintf("completion: one SHELL expected, got %q; allowed: %s", args, strings.Join(shells, ", "))
				if len(args) == 1 {
					msg = fmt.Sprintf("completion: no completion for shell %q; allowed: %s", args[0], strings.Join(shells, ", "))
					if n := setting.Nearest(args[0], shells); n != "" {
						msg += fmt.Sprintf(" (did you mean %q?)", n)
					}
				}
				return usageErr("%s", msg)
			}
			return nil
		},
		ValidArgs: shells,
		RunE: func(c *cobra.Command, args []string) error {
			w := c.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			default:
				return root.GenPowerShellCompletionWithDesc(w)
			}
		},
	}
}

// completeScenarios completes the first argument with scenario names.
func completeScenarios(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return scenario.Names(), cobra.ShellCompDirectiveNoFileComp
}

// completeWebScenarios completes the first argument with the scenarios
// that have an HTTP backend.
func completeWebScenarios(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return webScenarios(), cobra.ShellCompDirectiveNoFileComp
}

// clusterNames are the local clusters (none when the state cannot be read).
func clusterNames() []string {
	names, _ := cluster.List()
	return names
}

// completeClusters completes a cluster name (an argument or a flag value).
func completeClusters(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	return clusterNames(), cobra.ShellCompDirectiveNoFileComp
}

// completeFirstCluster completes the first argument with a cluster name.
func completeFirstCluster(c *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeClusters(c, args, s)
}

// completeSetting completes --set: a key (then its "="), and after
// "KEY=" the values an enum or boolean setting allows.
func completeSetting(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return completeKeyValue(settingsFor(c, args), toComplete)
}

// settingsFor are the settings a --set of this command line can name: its
// scenario's (the first argument, or --scenario), its engine's (--engine,
// else the --cluster's, else the default) and the cache tier's as
// cache.ENGINE.KEY; every engine's and scenario's while the command line
// names no scenario. Each key once. Only run takes the cache tier's keys.
func settingsFor(c *cobra.Command, args []string) []setting.Spec {
	flag := func(name string) string {
		if f := c.Flags().Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	scen := flag("scenario")
	if len(args) > 0 && c.Flags().Lookup("scenario") == nil {
		scen = args[0]
	}
	s, err := scenario.Lookup(scen)
	if err != nil {
		return dedupe(allSettings())
	}
	specs := append([]setting.Spec{}, s.Settings()...)
	eng := flag("engine")
	if eng == "" && flag("cluster") != "" {
		if st, err := cluster.Load(flag("cluster")); err == nil {
			eng = st.Engine
		}
	}
	if eng == "" {
		eng = engine.Default
	}
	if e, err := engine.Lookup(eng); err == nil {
		specs = append(specs, e.Settings()...)
	}
	if e, err := engine.Lookup(flag("cache")); err == nil && c.Name() == "run" { // run routes cache.ENGINE.KEY to its tier
		for _, sp := range e.Settings() {
			sp.Key = scenario.RoleCache + "." + sp.Key
			specs = append(specs, sp)
		}
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Key < specs[j].Key })
	return dedupe(specs)
}

// dedupe keeps the first spec of each key of sorted specs (scenarios
// share the cache settings).
func dedupe(specs []setting.Spec) []setting.Spec {
	return slices.CompactFunc(specs, func(a, b setting.Spec) bool { return a.Key == b.Key })
}

// completeClusterOption completes `cluster up ENGINE --opt KEY=VALUE`
// from the options ENGINE's clusters declare.
func completeClusterOption(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	p, err := cluster.Lookup(args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeKeyValue(p.Options().Specs, toComplete)
}

// completeKeyValue completes KEY=VALUE from specs: the keys (with their
// descriptions), then a key's allowed values.
func completeKeyValue(specs []setting.Spec, toComplete string) ([]string, cobra.ShellCompDirective) {
	if key, _, ok := strings.Cut(toComplete, "="); ok {
		for _, sp := range specs {
			if sp.Key != key {
				continue
			}
			var vals []string
			switch {
			case len(sp.Allowed) > 0:
				vals = sp.Allowed
			case sp.Kind == setting.Bool:
				vals = []string{"true", "false"}
			}
			out := make([]string, 0, len(vals))
			for _, v := range vals {
				out = append(out, key+"="+v)
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	out := make([]string, 0, len(specs))
	for _, sp := range specs {
		out = append(out, sp.Key+"=\t"+sp.Description)
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// allSettings are the settings of every engine and scenario.
func allSettings() []setting.Spec {
	var specs []setting.Spec
	for _, n := range engine.Names() {
		if e, err := engine.Lookup(n); err == nil {
			specs = append(specs, e.Settings()...)
		}
	}
	for _, n := range scenario.Names() {
		if s, err := scenario.Lookup(n); err == nil {
			specs = append(specs, s.Settings()...)
		}
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Key < specs[j].Key })
	return specs
}

// modelNames are the load models.
func modelNames() []string {
	names := make([]string, len(load.Models))
	for i, m := range load.Models {
		names[i] = m.Name
	}
	return names
}

// completeRunFlags registers the allowed values and completions of the
// run flags.
func completeRunFlags(c *cobra.Command) {
	choices(c, "engine", engine.Names()...)
	choices(c, "model", modelNames()...)
	choices(c, "arrivals", "constant", "poisson")
	choices(c, "progress", progressModes...)
	choices(c, "cache", engine.WithCache()...)
	for _, n := range []string{"cluster", "cache-cluster"} {
		_ = c.RegisterFlagCompletionFunc(n, completeClusters)
	}
	_ = c.RegisterFlagCompletionFunc("set", completeSetting)
	_ = c.RegisterFlagCompletionFunc("out", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	})
}

// fileFlags are the flags whose values are file names (the shell offers
// the files).
var fileFlags = map[string]bool{"target": true, "cpuprofile": true}

// noFileNames keeps the shell from offering file names for the value of
// any flag of c that has no completion of its own (--users, --duration)
// and is not a file: a new flag needs no line here.
func noFileNames(c *cobra.Command) {
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if _, ok := c.GetFlagCompletionFunc(f.Name); !ok && f.NoOptDefVal == "" && !fileFlags[f.Name] && f.Name != "out" {
			_ = c.RegisterFlagCompletionFunc(f.Name, cobra.NoFileCompletions)
		}
	})
}

// completeDirs completes directories (results directories).
func completeDirs(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}
