package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// listCmd prints scenarios, engines, load models and every setting with
// type, default, allowed values and a description.
func listCmd(args []string, w io.Writer) error {
	if len(args) > 0 {
		return usageErr("list takes no arguments, got %q", args)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIOS\t\t")
	for _, n := range scenario.Names() {
		s, _ := scenario.Lookup(n)
		fmt.Fprintf(tw, "  %s\t%s (engines: %s)\t\n", n, s.Description(), strings.Join(s.Engines(), ", "))
	}
	fmt.Fprintln(tw, "\nENGINES\t\t")
	for _, n := range engine.Names() {
		e, _ := engine.Lookup(n)
		fmt.Fprintf(tw, "  %s\t%s\t\n", n, e.Description())
	}
	fmt.Fprintln(tw, "\nLOAD MODELS\t\t")
	fmt.Fprintln(tw, "  closed\t--users N [--think 2s|0-5s|exp:2s] for --duration or --ops (shared by all users)\t")
	fmt.Fprintln(tw, "  rate\t--rate 5000/s [--arrivals constant|poisson] [--users max in flight]; latency from the intended start\t")
	fmt.Fprintln(tw, "  phases\t--phases 30s@1/s,30s@2/s: sessions arrive at a rate per phase, each closed-loop with think times\t")
	tw.Flush()

	fmt.Fprintln(w, "\nSETTINGS (--set key=value)")
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  KEY\tTYPE\tDEFAULT\tALLOWED\tDESCRIPTION")
	print := func(specs []setting.Spec) {
		for _, sp := range specs {
			def := sp.Default
			if def == "" {
				def = `""`
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", sp.Key, sp.Kind, def, sp.AllowedText(), sp.Description)
		}
	}
	for _, n := range engine.Names() {
		e, _ := engine.Lookup(n)
		print(e.Settings())
	}
	for _, n := range scenario.Names() {
		s, _ := scenario.Lookup(n)
		print(s.Settings())
	}
	return tw.Flush()
}
