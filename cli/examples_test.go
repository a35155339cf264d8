package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/apptier"
	"github.com/scalelab/scalelab/cluster"
	"github.com/spf13/cobra"
)

// docCommands returns the scalelab command lines in the shell blocks of a
// Markdown file (continuation lines joined, comments, redirections and
// shell loops cut), with the line each starts on.
func docCommands(t *testing.T, file string) map[int][]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmds := map[int][]string{}
	inBlock, start := false, 0
	var cur string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		if cur == "" {
			i := strings.Index(line, "scalelab ")
			if i < 0 || !(strings.HasPrefix(line, "scalelab ") || strings.HasPrefix(line, "bin/scalelab ") || strings.Contains(line[:i], "do ")) {
				continue
			}
			line, start = line[i:], n
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if strings.HasSuffix(strings.TrimSpace(line), "\\") {
			cur += strings.TrimSuffix(strings.TrimSpace(line), "\\") + " "
			continue
		}
		cur += line
		cmds[start] = shellWords(cur)
		cur = ""
	}
	return cmds
}

// shellWords splits a command line as a shell would for these examples:
// quotes group, and a redirection, pipe, "&" or ";" ends the command.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	quote := rune(0)
	inWord := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case r == '>' || r == '|' || r == '&' || r == ';':
			if inWord {
				words = append(words, w.String())
			}
			return words
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// Every scalelab command in the README and the docs names a command that
// exists, with flags it declares, values of their type and its number of
// arguments: the examples a new user copies keep working.
func TestDocExamplesParse(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../docs/*.md")
	more, _ := filepath.Glob("../docs/*/*.md")
	files = append(append(files, "../README.md"), more...)
	total := 0
	for _, file := range files {
		for line, words := range docCommands(t, file) {
			total++
			root := newRoot()
			root.InitDefaultHelpCmd()
			args := normalizeArgs(root, words[1:])
			c, rest, err := root.Find(args)
			if err != nil || c == root {
				t.Errorf("%s:%d: %q: no such command", file, line, strings.Join(words, " "))
				continue
			}
			c.InitDefaultHelpFlag()
			if err := c.ParseFlags(rest); err != nil {
				t.Errorf("%s:%d: %q: %v", file, line, strings.Join(words, " "), flagError(c, err))
				continue
			}
			if help, _ := c.Flags().GetBool("help"); c.Args != nil && !help {
				if err := c.Args(c, c.Flags().Args()); err != nil {
					t.Errorf("%s:%d: %q: %v", file, line, strings.Join(words, " "), err)
				}
			}
			if path(c) == "cluster up" && len(c.Flags().Args()) == 1 {
				if err := docClusterOptions(c); err != nil {
					t.Errorf("%s:%d: %q: %v", file, line, strings.Join(words, " "), err)
				}
			}
		}
	}
	if total < 50 {
		t.Errorf("found %d scalelab commands in the docs; the extraction is broken", total)
	}
}

// docClusterOptions checks the options a documented `cluster up ENGINE`
// gives (--opt and the flags that spell options) against what ENGINE's
// clusters declare.
func docClusterOptions(c *cobra.Command) error {
	p, err := cluster.Lookup(c.Flags().Arg(0))
	if err != nil {
		return err
	}
	spec := cluster.Spec{Options: map[string]string{}}
	opts, _ := c.Flags().GetStringArray("opt")
	for _, o := range opts {
		k, v, _ := strings.Cut(o, "=")
		spec.Options[k] = v
	}
	if _, app := p.(cluster.Tiered); app {
		spec.Nodes, _ = c.Flags().GetInt("servers")
		spec.Options[apptier.OptScenario], _ = c.Flags().GetString("scenario")
	} else {
		spec.Nodes, _ = c.Flags().GetInt("nodes")
		spec.Replicas, _ = c.Flags().GetInt("replicas")
		spec.Heap, _ = c.Flags().GetString("heap")
		if r, _ := c.Flags().GetString("roles"); r != "" {
			spec.Roles = strings.Split(r, ",")
		}
		if b, _ := c.Flags().GetString("backend"); b != "" {
			spec.Options[cluster.OptBackend] = b
		}
	}
	_, err = cluster.Resolve(p, spec)
	return err
}
