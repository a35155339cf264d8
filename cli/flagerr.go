package cli

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/runner"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// argsKey holds, on the root command, the arguments being parsed (joined by
// NUL), so that a flag error can name the positional argument beside it.
const argsKey = "scalelab/args"

// flagHints explain flags that a command refuses although users reach for
// them, keyed "COMMAND [ARG] --flag" (the first positional argument makes
// the hint specific: cluster up app).
var flagHints = map[string]string{
	"cluster up app --engine": "the store's engine comes from --cluster STORE",
	"cluster up --engine":     "the engine is the ENGINE argument (scalelab cluster up postgres --name pg1)",
	"serve --duration":        "the server runs until SIGTERM or Ctrl-C; the run that drives it has --duration",
}

// normalizeArgs spells -name and -name=value as --name and --name=value,
// as Go's flag package accepted them, for the long flag names some command
// of the tree declares (other words are left alone), up to a "--".
func normalizeArgs(root *cobra.Command, args []string) []string {
	known := map[string]bool{"help": true, "version": true}
	walk(root, func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
	})
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if known[name] {
				out[i] = "-" + a
			}
		}
	}
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[argsKey] = strings.Join(out, "\x00")
	return out
}

// wantsHelp reports whether args ask for help (-h or --help before a "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help":
			return true
		}
	}
	return false
}

// walk calls fn on c and every command under it.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, s := range c.Commands() {
		walk(s, fn)
	}
}

// flagError turns pflag's errors into scalelab's: what was wrong, what is
// allowed, the nearest flag, exit code 2.
func flagError(c *cobra.Command, err error) error {
	if wantsHelp(strings.Split(c.Root().Annotations[argsKey], "\x00")) {
		printHelp(c, c.OutOrStdout()) // `run --userz --help`: the help answers the question
		return nil
	}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) {
		name := ne.GetSpecifiedName()
		if sh := ne.GetSpecifiedShortnames(); sh != "" {
			name = sh // -userz: pflag read it as shorthands
		}
		return unknownFlag(c, name)
	}
	var ive *pflag.InvalidValueError
	if errors.As(err, &ive) {
		return badFlagValue(c, ive.GetFlag(), ive.GetValue())
	}
	var vre *pflag.ValueRequiredError
	if errors.As(err, &vre) {
		f := c.Flags().Lookup(vre.GetSpecifiedName())
		if f != nil {
			kind, usage := flagValueName(f)
			return usageErr("%s: --%s needs a value (%s): %s", path(c), f.Name, kind, usage)
		}
	}
	return usageErr("%s: %v; see 'scalelab %s --help'", path(c), err, path(c))
}

// unknownFlag explains a flag c does not declare: a hint when users are
// known to reach for it here, the commands that do declare it, and the
// nearest flag of c.
func unknownFlag(c *cobra.Command, name string) error {
	p := path(c)
	subject := p
	pos := firstPositional(c)
	if pos != "" && c.HasSubCommands() {
		return unknownSub(c, pos) // the command itself is wrong: `scalelab runn --users 8`
	}
	if pos != "" {
		subject += " " + pos
	}
	see := fmt.Sprintf("see 'scalelab %s --help'", p)
	for _, key := range []string{p + " " + pos + " --" + name, p + " --" + name} {
		if h, ok := flagHints[key]; ok {
			return usageErr("%s takes no --%s: %s", subject, name, h)
		}
	}
	var elsewhere []string
	walk(c.Root(), func(o *cobra.Command) {
		if o != c && o.LocalFlags().Lookup(name) != nil {
			elsewhere = append(elsewhere, "'scalelab "+path(o)+"'")
		}
	})
	if len(elsewhere) > 0 {
		sort.Strings(elsewhere)
		return usageErr("%s takes no --%s; it is a flag of %s; %s", subject, name, strings.Join(elsewhere, ", "), see)
	}
	var own []string
	c.Flags().VisitAll(func(f *pflag.Flag) { own = append(own, f.Name) })
	mean := ""
	// a flag's name starts with what it is about: a guess that starts
	// elsewhere (--bogus, --ops) is more noise than help
	if n := setting.Nearest(name, own); n != "" && name != "" && n[0] == name[0] {
		mean = fmt.Sprintf(" (did you mean --%s?)", n)
	}
	if p == "" { // no command: `scalelab -v`
		if strings.HasPrefix("version", name) && name != "" {
			mean = " (did you mean --version?)"
		}
		return usageErr("unknown flag --%s%s; see 'scalelab --help'", name, mean)
	}
	return usageErr("%s: unknown flag --%s%s; %s", p, name, mean, see)
}

// firstPositional finds the first positional argument given to c (the
// ENGINE of cluster up, the SCENARIO of run) in the arguments being
// parsed, or "".
func firstPositional(c *cobra.Command) string {
	args := strings.Split(c.Root().Annotations[argsKey], "\x00")
	words := strings.Fields(path(c))
	for len(words) > 0 && len(args) > 0 && args[0] == words[0] {
		args, words = args[1:], words[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case strings.HasPrefix(a, "-"):
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if f := anyFlag(c, name); f != nil && !hasValue && f.NoOptDefVal == "" {
				i++ // the flag's value
			}
		default:
			return a
		}
	}
	return ""
}

// anyFlag looks name up among c's flags, else among those of any command
// (an unknown flag is read as the other commands read it: with a value or
// without).
func anyFlag(c *cobra.Command, name string) *pflag.Flag {
	if f := c.Flags().Lookup(name); f != nil {
		return f
	}
	var found *pflag.Flag
	walk(c.Root(), func(o *cobra.Command) {
		if f := o.LocalFlags().Lookup(name); f != nil && found == nil {
			found = f
		}
	})
	return found
}

// badFlagValue explains a value a flag's type refuses.
func badFlagValue(c *cobra.Command, f *pflag.Flag, value string) error {
	p := path(c)
	switch f.Value.Type() {
	case "duration":
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			return usageErr("%s: --%s %s: add a unit, e.g. %ss (units: ms, s, m, h)", p, f.Name, value, value)
		}
		return usageErr("%s: --%s %q: want a duration with its unit, e.g. 10s, 500ms, 2m", p, f.Name, value)
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		return usageErr("%s: --%s %q: want a whole number", p, f.Name, value)
	case "float64", "float32":
		return usageErr("%s: --%s %q: want a number", p, f.Name, value)
	case "bool":
		return usageErr("%s: --%s=%s: want true or false (--%s alone is true)", p, f.Name, value, f.Name)
	}
	return usageErr("%s: --%s %q: %s", p, f.Name, value, f.Usage)
}

// enumFlag checks the value of an enum-like flag (--progress, --model,
// --arrivals): one of allowed, else exit 2 listing them, with the nearest
// when it is near enough to be a typo (setting.Nearest, the rule of every
// "did you mean").
func enumFlag(cmd, flag, value string, allowed []string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	mean := ""
	if n := setting.Nearest(value, allowed); n != "" {
		mean = fmt.Sprintf(" (did you mean %q?)", n)
	}
	return usageErr("%s: --%s %q is not one of the allowed values%s; allowed: %s", cmd, flag, value, mean, strings.Join(allowed, "|"))
}

// setWithoutEquals finds, in the arguments being parsed, a --set whose
// value is a known setting key with no "=" followed by a word that is not
// a flag (`--set ycsb.workload b`): when that word is a stray positional
// argument, it was meant as the value. It returns the error that says so,
// or nil.
func setWithoutEquals(c *cobra.Command) error {
	args := strings.Split(c.Root().Annotations[argsKey], "\x00")
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--" {
			return nil
		}
		key, next := "", ""
		switch {
		case args[i] == "--set" && i+2 < len(args):
			key, next = args[i+1], args[i+2]
		case strings.HasPrefix(args[i], "--set="):
			key, next = strings.TrimPrefix(args[i], "--set="), args[i+1]
		default:
			continue
		}
		if key == "" || strings.Contains(key, "=") || strings.HasPrefix(next, "-") || next == "" || !knownSettingKey(key) {
			continue
		}
		return usageErr("%s: --set takes KEY=VALUE: did you mean --set %s=%s?", path(c), key, next)
	}
	return nil
}

// knownSettingKey reports whether key is a setting of some engine,
// scenario or load model (cache.ENGINE.KEY for a cache tier's).
func knownSettingKey(key string) bool {
	var specs []setting.Spec
	for _, n := range engine.Names() {
		e, _ := engine.Lookup(n)
		specs = append(specs, e.Settings()...)
	}
	for _, n := range scenario.Names() {
		s, _ := scenario.Lookup(n)
		specs = append(specs, s.Settings()...)
	}
	specs = append(specs, runner.BreakSettings()...)
	key = strings.TrimPrefix(key, "cache.")
	for _, sp := range specs {
		if sp.Key == key {
			return true
		}
	}
	return false
}
