package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpWidth is the column help text wraps at.
const helpWidth = 100

// Annotations scalelab puts on flags and commands for the help.
const (
	groupKey   = "scalelab/group"   // a flag's group title
	allowedKey = "scalelab/allowed" // a flag's allowed values
	groupsKey  = "scalelab/groups"  // a command's group titles, in order, one per line
)

// addGroup declares flags of c under a titled group of its help, in the
// order decl declares them on fs (the groups in the order of the calls).
// Adding a flag to a group is one line in decl:
//
//	addGroup(c, "Load", func(fs *pflag.FlagSet) {
//		fs.DurationVar(&f.rampUp, "ramp-up", 0, "raise the load from zero over this long")
//	})
func addGroup(c *cobra.Command, title string, decl func(fs *pflag.FlagSet)) {
	fs := pflag.NewFlagSet(title, pflag.ContinueOnError)
	fs.SortFlags = false
	decl(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[groupKey] = []string{title}
	})
	c.Flags().SortFlags = false
	c.Flags().AddFlagSet(fs)
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	if c.Annotations[groupsKey] != "" {
		c.Annotations[groupsKey] += "\n"
	}
	c.Annotations[groupsKey] += title
}

// choices records the values flag name of c allows: the help lists them
// and the shell completes them.
func choices(c *cobra.Command, name string, values ...string) {
	f := c.Flags().Lookup(name)
	if f == nil {
		panic("choices: no flag --" + name + " on " + c.Name())
	}
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[allowedKey] = values
	_ = c.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, prefix) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// argsHelp adds to the help of a command (by its path) what depends on its
// arguments: `cluster up ENGINE --help` lists ENGINE's cluster options.
var argsHelp = map[string]func(w io.Writer, args []string){
	"cluster up": clusterUpHelp,
}

// hasOwnFlags reports whether c takes a flag besides --help.
func hasOwnFlags(c *cobra.Command) bool {
	own := false
	c.Flags().VisitAll(func(f *pflag.Flag) { own = own || (f.Name != "help" && !f.Hidden) })
	return own
}

// printHelp writes c's help: usage, description, subcommands, flags by
// group with their defaults and allowed values, and examples.
func printHelp(c *cobra.Command, w io.Writer) {
	c.InitDefaultHelpFlag() // the same usage line whether c runs or is named by `help`
	use := c.UseLine()
	if !c.HasParent() {
		use = c.Name() + " COMMAND [flags]"
	} else if !hasOwnFlags(c) {
		use = strings.TrimSuffix(use, " [flags]")
	}
	fmt.Fprintf(w, "Usage: %s\n", use)
	if c.Long != "" {
		fmt.Fprintln(w)
		for _, line := range flow(c.Long, helpWidth) {
			fmt.Fprintln(w, line)
		}
	} else if c.Short != "" {
		fmt.Fprintf(w, "\n%s.\n", upperFirst(c.Short))
	}
	if subs := c.Commands(); len(subs) > 0 {
		fmt.Fprintf(w, "\nCommands:\n")
		for _, s := range subs {
			if !s.IsAvailableCommand() && s.Name() != "help" {
				continue
			}
			fmt.Fprintf(w, "  %s\n", s.UseLine())
			for _, line := range wrap(s.Short, helpWidth-6) {
				fmt.Fprintf(w, "      %s\n", line)
			}
		}
	}
	printFlagGroups(w, c)
	if more := argsHelp[path(c)]; more != nil {
		more(w, c.Flags().Args())
	}
	if c.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(c.Example, "\n"))
	}
	if c.HasAvailableSubCommands() {
		p := strings.TrimSpace(path(c) + " COMMAND")
		fmt.Fprintf(w, "\n'scalelab help %s' or 'scalelab %s --help' explains each command.\n", p, p)
	}
}

// printFlagGroups writes c's flags under their groups' titles (the others
// under "Flags"), spelled --name as the README spells them.
func printFlagGroups(w io.Writer, c *cobra.Command) {
	var titles []string
	if g := c.Annotations[groupsKey]; g != "" {
		titles = strings.Split(g, "\n")
	}
	byGroup := map[string][]*pflag.Flag{}
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		g := "Flags"
		if t := f.Annotations[groupKey]; len(t) > 0 {
			g = t[0]
		}
		byGroup[g] = append(byGroup[g], f)
	})
	if len(titles) > 0 {
		titles = append(titles, "Other")
		byGroup["Other"] = byGroup["Flags"]
	} else {
		titles = []string{"Flags"}
	}
	for _, t := range titles {
		if len(byGroup[t]) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", t)
		for _, f := range byGroup[t] {
			fmt.Fprint(w, formatFlag(f))
		}
	}
}

// flagValueName is the word after --name in the help: the usage's
// `BACKQUOTED` word, else the flag's type in plain words.
func flagValueName(f *pflag.Flag) (string, string) {
	name, usage := pflag.UnquoteUsage(f)
	switch name {
	case "stringArray", "strings":
		name = "string"
	case "float64":
		name = "float"
	case "int64", "uint64", "uint":
		name = "int"
	}
	return name, usage
}

// formatFlag renders one flag: "  --name VALUE" and its description,
// wrapped and indented, with the allowed values and the default when it
// is not the zero value.
func formatFlag(f *pflag.Flag) string {
	kind, desc := flagValueName(f)
	head := "  --" + f.Name
	if kind != "" {
		head += " " + kind
	}
	if a := f.Annotations[allowedKey]; len(a) > 0 && !strings.Contains(desc, strings.Join(a, "|")) {
		desc += "; one of: " + strings.Join(a, ", ")
	}
	if f.Value.Type() == "stringArray" && !strings.Contains(desc, "repeatable") {
		desc += " (repeatable)"
	}
	switch f.DefValue {
	case "", "0", "0s", "false", "[]":
	default:
		desc += fmt.Sprintf(" (default %s)", shortDuration(f.DefValue))
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

// shortDuration spells a duration's default as users type it: 10m, not
// 10m0s (other values are returned as they are).
func shortDuration(s string) string {
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flow returns the lines of a command's description at most width wide
// (but for a single longer word): a longer line is wrapped, and the tail
// of the wrap runs on into the next line when that line continues the
// paragraph (it is not blank, indented or a list item), instead of
// standing alone. An indented line wraps with its indent.
func flow(text string, width int) []string {
	in := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var out []string
	for i := 0; i < len(in); i++ {
		if len(in[i]) <= width {
			out = append(out, in[i])
			continue
		}
		rest := strings.TrimLeft(in[i], " \t")
		indent := in[i][:len(in[i])-len(rest)]
		parts := wrap(rest, max(width-len(indent), 1))
		for k := range parts {
			parts[k] = indent + parts[k]
		}
		if next := i + 1; next < len(in) && indent == "" && len(parts) > 1 && continues(in[next]) {
			in[next] = parts[len(parts)-1] + " " + in[next]
			parts = parts[:len(parts)-1]
		}
		out = append(out, parts...)
	}
	return out
}

// continues reports whether a line of a description carries on the
// paragraph before it.
func continues(line string) bool {
	return line != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, "- ")
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
