package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/setting"
)

// flagSpelled are the cluster options `cluster up` also takes as flags of
// their own, by option key.
var flagSpelled = map[string]string{
	cluster.OptNodes:    "--nodes",
	cluster.OptReplicas: "--replicas",
	cluster.OptHeap:     "--heap",
	cluster.OptRoles:    "--roles",
	cluster.OptBackend:  "--backend",
}

// appFlagSpelled are the options of app clusters `cluster up app` takes as
// flags of their own.
var appFlagSpelled = map[string]string{
	cluster.OptNodes:    "--servers",
	apptier.OptScenario: "--scenario",
	apptier.OptStore:    "--cluster",
	apptier.OptCache:    "--cache-cluster",
}

// flagsOf returns the flags that spell options of p's clusters, by key.
func flagsOf(p cluster.Provisioner) map[string]string {
	if _, ok := p.(cluster.Tiered); ok {
		return appFlagSpelled
	}
	return flagSpelled
}

// declaredBy names the provisioners whose clusters take the option key.
func declaredBy(key string) []string {
	var names []string
	for _, n := range cluster.Provisioners() {
		if p, err := cluster.Lookup(n); err == nil && cluster.Declares(p, key) {
			names = append(names, n)
		}
	}
	return names
}

// allowedOf returns the values the provisioners allow for the enum
// option key, each once, in the order declared.
func allowedOf(key string) []string {
	var out []string
	for _, n := range declaredBy(key) {
		p, _ := cluster.Lookup(n)
		sp, _ := p.Options().Spec(key)
		for _, a := range sp.Allowed {
			if !contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// writeSpec prints one setting: its key, kind, default and allowed values
// on a line, its description wrapped under it.
func writeSpec(w io.Writer, sp setting.Spec) {
	def := sp.Default
	if def == "" {
		def = `""`
	}
	head := fmt.Sprintf("%s (%s, default %s", sp.Key, sp.Kind, def)
	if a := sp.AllowedText(); a != "" && a != "-" {
		head += "; " + a
	}
	head += ")"
	for i, line := range wrap(head, helpWidth-4) {
		if i > 0 {
			line = "  " + line
		}
		fmt.Fprintln(w, "  "+line)
	}
	for _, line := range wrap(sp.Description, helpWidth-6) {
		fmt.Fprintln(w, "      "+line)
	}
}

// lookupProvisioner finds the provisioner name for `list cluster NAME` and
// `cluster up NAME --help`, with a did-you-mean when there is none.
func lookupProvisioner(name string) (cluster.Provisioner, error) {
	p, err := cluster.Lookup(name)
	if err != nil {
		return nil, usageErr("list cluster: %v", err)
	}
	return p, nil
}

// writeClusterOptions prints the options of p's clusters, as `cluster up
// ENGINE --help` and `list cluster ENGINE` show them.
func writeClusterOptions(w io.Writer, p cluster.Provisioner) {
	o := p.Options()
	title := fmt.Sprintf("Options of %s clusters (--opt KEY=VALUE", p.Engine())
	var flags []string
	for _, k := range o.Keys() {
		if f, ok := flagsOf(p)[k]; ok {
			flags = append(flags, k+" as "+f)
		}
	}
	if len(flags) > 0 {
		title += "; " + strings.Join(flags, ", ")
	}
	for i, line := range wrap(title+"):", helpWidth) {
		if i > 0 {
			line = "  " + line
		}
		fmt.Fprintln(w, line)
	}
	for _, k := range o.Keys() {
		sp, _ := o.Spec(k)
		writeSpec(w, sp)
	}
	if o.Free != nil {
		for _, line := range wrap("and any of the "+o.Free.What+", passed on as given", helpWidth-2) {
			fmt.Fprintln(w, "  "+line)
		}
	}
}

// clusterUpHelp ends `cluster up`'s help: the options of the ENGINE named
// (cluster up ENGINE --help), else where to find them.
func clusterUpHelp(w io.Writer, args []string) {
	fmt.Fprintln(w)
	if len(args) == 0 {
		fmt.Fprintln(w, "Options of each engine's clusters (--opt KEY=VALUE; 'cluster up ENGINE --help' for their defaults\nand allowed values):")
		writeClusterKeys(w)
		return
	}
	p, err := cluster.Lookup(args[0])
	if err != nil {
		fmt.Fprintln(w, err)
		return
	}
	writeClusterOptions(w, p)
}

// listClusters prints the provisioners with their options' keys, or the
// options of one (name).
func listClusters(w io.Writer, name string, all bool) error {
	if name != "" {
		p, err := lookupProvisioner(name)
		if err != nil {
			return err
		}
		writeClusterOptions(w, p)
		return nil
	}
	sep(w, all)
	fmt.Fprintln(w, "CLUSTERS (scalelab cluster up ENGINE; scalelab list cluster ENGINE for the options)")
	writeClusterKeys(w)
	return nil
}

// writeClusterKeys writes each provisioner with its options' keys.
func writeClusterKeys(w io.Writer) {
	for _, n := range cluster.Provisioners() {
		p, _ := cluster.Lookup(n)
		desc := "options: " + strings.Join(p.Options().Keys(), ", ")
		if f := p.Options().Free; f != nil {
			desc += ", and " + f.What
		}
		if e := cluster.EngineOf(p); e != n {
			desc += " (clusters for the " + e + " engine)"
		}
		writeEntry(w, n, desc)
	}
}

// clusterOptionsMarkdown is the tables of the provisioners' options that
// the cluster document carries (a test keeps the two the same).
func clusterOptionsMarkdown(provs []cluster.Provisioner) string {
	var b strings.Builder
	for _, p := range provs {
		n := p.Engine()
		fmt.Fprintf(&b, "### %s\n\n| option | type | default | allowed | what |\n|---|---|---|---|---|\n", n)
		o := p.Options()
		for _, k := range o.Keys() {
			sp, _ := o.Spec(k)
			key := "`" + k + "`"
			if f, ok := flagsOf(p)[k]; ok {
				key += " (`" + f + "`)"
			}
			def := "`" + sp.Default + "`"
			if sp.Default == "" {
				def = `""`
			}
			allowed := strings.ReplaceAll(sp.AllowedText(), "|", `\|`)
			if sp.Kind == setting.String {
				allowed = "text"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", key, sp.Kind, def, allowed, strings.ReplaceAll(sp.Description, "|", `\|`))
		}
		if o.Free != nil {
			fmt.Fprintf(&b, "\nAny other key: %s, passed on as given.\n", o.Free.What)
		}
		b.WriteString("\n")
	}
	return b.String()
}
