package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpWidth is the column help text wraps at.
const helpWidth = 100

// wantsHelp reports whether args ask for help (-h, -help or --help before
// a "--" that ends the flags).
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// printHelp writes the help of command cmd (its arguments in rest, which
// may name a subcommand) to w.
func printHelp(w io.Writer, cmd string, rest []string) {
	switch cmd {
	case "run":
		fmt.Fprint(w, runUsage)
		fs, _ := newRunFlags()
		printFlagGroups(w, fs, runFlagGroups)
	case "list":
		fmt.Fprint(w, listUsage)
	case "cluster":
		fmt.Fprint(w, clusterUsage)
	case "experiment":
		fmt.Fprint(w, experimentUsage)
	case "check":
		fmt.Fprint(w, checkUsage)
	case "report":
		fmt.Fprint(w, reportUsage)
	case "audit":
		fmt.Fprint(w, auditUsage)
	case "serve":
		fmt.Fprint(w, serveUsage)
	case "merge":
		fmt.Fprint(w, mergeUsage)
	case "kube":
		fmt.Fprint(w, kubeUsage)
	case "version":
		fmt.Fprintln(w, "Usage: scalelab version\nPrints the version of this build.")
	default:
		fmt.Fprint(w, usage)
	}
}

const runUsage = `Usage: scalelab run SCENARIO [flags]
Runs SCENARIO (see 'scalelab list scenarios') against an engine under a load model, and writes a
results directory (run.json, intervals.hlog, series.csv, report.html). Flags may stand before or
after SCENARIO. Exit codes: 0 ok, 1 an SLO or check failed (lost writes, wrong answers), 2 bad
usage, 3 interrupted, 4 the run could not finish, 70 internal error.
`

// flagGroup is a titled set of flags in a command's help.
type flagGroup struct {
	title string
	names []string
}

// runFlagGroups orders the run flags in the help; a flag in no group is
// listed under "Other".
var runFlagGroups = []flagGroup{
	{"Load", []string{"model", "users", "think", "duration", "ops", "rate", "arrivals", "phases", "warmup", "seed", "drain", "load-only"}},
	{"Engine and tiers", []string{"engine", "target", "cluster", "set", "cache", "cache-target", "cache-cluster", "app"}},
	{"Output and checks", []string{"out", "progress", "samples", "telemetry", "slo", "audit", "cpuprofile"}},
	{"Faults", []string{"fault", "recovery-wait"}},
	{"Many load machines", []string{"segment", "start-at"}},
}

// printFlagGroups writes fs's flags under the groups' titles, spelled
// --name as the README spells them, descriptions wrapped at helpWidth.
func printFlagGroups(w io.Writer, fs *flag.FlagSet, groups []flagGroup) {
	seen := map[string]bool{}
	write := func(title string, flags []*flag.Flag) {
		if len(flags) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, fl := range flags {
			seen[fl.Name] = true
			fmt.Fprint(w, formatFlag(fl))
		}
	}
	for _, g := range groups {
		var flags []*flag.Flag
		for _, n := range g.names {
			if fl := fs.Lookup(n); fl != nil {
				flags = append(flags, fl)
			}
		}
		write(g.title, flags)
	}
	var other []*flag.Flag
	fs.VisitAll(func(fl *flag.Flag) {
		if !seen[fl.Name] {
			other = append(other, fl)
		}
	})
	write("Other", other)
}

// formatFlag renders one flag: "  --name VALUE" and its description,
// wrapped and indented, with the default when it is not the zero value.
func formatFlag(fl *flag.Flag) string {
	kind, desc := flag.UnquoteUsage(fl)
	head := "  --" + fl.Name
	if kind != "" {
		head += " " + kind
	}
	switch fl.DefValue {
	case "", "0", "0s", "false", "[]":
	default:
		desc += fmt.Sprintf(" (default %s)", fl.DefValue)
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteByte('\n')
	for _, line := range wrap(desc, helpWidth-6) {
		b.WriteString("      ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// wrap breaks text into lines of at most width characters at spaces (a
// word longer than width stands alone on its line).
func wrap(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, word := range strings.Fields(text) {
		if cur.Len() > 0 && cur.Len()+1+len(word) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(word)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
