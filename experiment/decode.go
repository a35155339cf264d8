package experiment

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/scalelab/scalelab/setting"
)

// Pos is a position in an experiment file (1-based line and column).
type Pos struct {
	Line int `json:"line"`
	Col  int `json:"col"`
}

// FieldError is one error in an experiment file: where, which field, what
// was wrong, what is allowed and the nearest valid name.
type FieldError struct {
	File  string
	Pos   Pos
	Field string // dotted path, e.g. "repeats.until_ci_within"
	Msg   string
}

// Error formats the error as FILE:LINE:COL: FIELD: MESSAGE.
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Pos.Line, e.Pos.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every error found in an experiment file, in file order.
type Errors []*FieldError

// Error lists every error, one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	if len(es) > 1 {
		return fmt.Sprintf("%d errors in the experiment file:\n%s", len(es), strings.Join(lines, "\n"))
	}
	return strings.Join(lines, "\n")
}

func (es Errors) sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Pos.Line != es[j].Pos.Line {
			return es[i].Pos.Line < es[j].Pos.Line
		}
		return es[i].Pos.Col < es[j].Pos.Col
	})
	return es
}

// decoder walks a yaml.Node tree, collecting every error with its position.
type decoder struct {
	file string
	errs Errors
}

func posOf(n *yaml.Node) Pos {
	if n == nil {
		return Pos{}
	}
	return Pos{Line: n.Line, Col: n.Column}
}

func (d *decoder) errAt(pos Pos, field, format string, a ...any) {
	d.errs = append(d.errs, &FieldError{File: d.file, Pos: pos, Field: field, Msg: fmt.Sprintf(format, a...)})
}

func (d *decoder) errorf(n *yaml.Node, field, format string, a ...any) {
	d.errAt(posOf(n), field, format, a...)
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return "an empty list"
		}
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "empty"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// entry is one key of a mapping.
type entry struct {
	key  string
	k, v *yaml.Node
}

// fields returns the entries of a mapping, reporting a node that is not a
// mapping, duplicate keys and keys outside allowed (nil allows any key).
func (d *decoder) fields(n *yaml.Node, field string, allowed []string) []entry {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		want := "a mapping"
		if len(allowed) > 0 {
			want += " with keys " + strings.Join(allowed, ", ")
		}
		d.errorf(n, field, "expected %s, got %s", want, kindName(n))
		return nil
	}
	seen := map[string]bool{}
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, field, "keys must be plain names, got %s", kindName(k))
			continue
		}
		key := k.Value
		path := join(field, key)
		if k.Tag == "!!merge" {
			d.errorf(k, field, "merge keys (<<) are not supported; use profiles to vary a file")
			continue
		}
		if seen[key] {
			d.errorf(k, path, "duplicate key")
			continue
		}
		seen[key] = true
		if allowed != nil && !contains(allowed, key) {
			msg := fmt.Sprintf("unknown key %q; allowed: %s", key, strings.Join(allowed, ", "))
			if near := setting.Nearest(key, allowed); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			d.errorf(k, field, "%s", msg)
			continue
		}
		out = append(out, entry{key: key, k: k, v: v})
	}
	return out
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalar returns a scalar's text; lists, mappings and empty values are errors.
func (d *decoder) scalar(n *yaml.Node, field string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, field, "expected a value, got %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

// str returns a scalar as a Value with its position.
func (d *decoder) str(n *yaml.Node, field string) Value {
	s, ok := d.scalar(n, field)
	if !ok {
		return Value{}
	}
	return Value{Text: s, Pos: posOf(n), Set: true}
}

// integer parses an integer scalar in [lo, hi].
func (d *decoder) integer(n *yaml.Node, field string, lo, hi int) (int, bool) {
	s, ok := d.scalar(n, field)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < lo || v > hi {
		d.errorf(n, field, "%q: allowed: an integer in [%d, %d]", s, lo, hi)
		return 0, false
	}
	return v, true
}

// percent parses "4%" into 0.04, in (0, 100%].
func (d *decoder) percent(n *yaml.Node, field string) (float64, bool) {
	s, ok := d.scalar(n, field)
	if !ok {
		return 0, false
	}
	num, hasPct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !hasPct || err != nil || !(v > 0 && v <= 100) {
		d.errorf(n, field, "%q: allowed: a percentage in (0%%, 100%%], e.g. 4%%", s)
		return 0, false
	}
	return v / 100, true
}

// strList accepts one scalar or a list of scalars.
func (d *decoder) strList(n *yaml.Node, field string) []Value {
	n = resolve(n)
	if n.Kind == yaml.SequenceNode {
		var out []Value
		for i, c := range n.Content {
			if v := d.str(c, fmt.Sprintf("%s[%d]", field, i+1)); v.Set {
				out = append(out, v)
			}
		}
		return out
	}
	if v := d.str(n, field); v.Set {
		return []Value{v}
	}
	return nil
}

// enum checks a scalar against allowed values.
func (d *decoder) enum(n *yaml.Node, field string, allowed ...string) Value {
	v := d.str(n, field)
	if v.Set && !contains(allowed, v.Text) {
		msg := fmt.Sprintf("%q: allowed: %s", v.Text, strings.Join(allowed, "|"))
		if near := setting.Nearest(v.Text, allowed); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		d.errorf(n, field, "%s", msg)
		return Value{}
	}
	return v
}
