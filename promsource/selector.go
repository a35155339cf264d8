package promsource

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Selector picks Prometheus series: an optional metric name and label
// matchers, as PromQL writes them (`process_cpu_seconds_total{job="app"}`,
// or only the matchers: `instance=~"web.*:9100"`).
type Selector struct {
	Metric   string
	Matchers []Matcher
}

// Matcher is one label matcher: Name Op "Value" (Op is =, !=, =~ or !~).
type Matcher struct {
	Name, Op, Value string
}

var identRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*`)

// ParseSelector reads a selector. Values are double-quoted (Go escapes)
// or back-quoted; a regular expression must compile.
func ParseSelector(s string) (Selector, error) {
	var sel Selector
	rest := strings.TrimSpace(s)
	if rest == "" {
		return sel, fmt.Errorf("empty selector; want label matchers such as instance=\"db1:9100\", or a metric with them: process_cpu_seconds_total{job=\"app\"}")
	}
	if m := identRE.FindString(rest); m != "" {
		after := strings.TrimSpace(rest[len(m):])
		if after == "" || after[0] == '{' {
			sel.Metric, rest = m, after
		}
	}
	if strings.HasPrefix(rest, "{") {
		if !strings.HasSuffix(rest, "}") {
			return sel, fmt.Errorf("selector %q: a '{' without its closing '}'", s)
		}
		rest = strings.TrimSpace(rest[1 : len(rest)-1])
	}
	for rest != "" {
		name := identRE.FindString(rest)
		if name == "" || strings.Contains(name, ":") {
			return sel, fmt.Errorf("selector %q: want a label name at %q", s, rest)
		}
		rest = strings.TrimSpace(rest[len(name):])
		var op string
		for _, o := range []string{"=~", "!~", "!=", "="} {
			if strings.HasPrefix(rest, o) {
				op = o
				break
			}
		}
		if op == "" {
			return sel, fmt.Errorf("selector %q: after label %s want one of = != =~ !~", s, name)
		}
		rest = strings.TrimSpace(rest[len(op):])
		val, n, err := quoted(rest)
		if err != nil {
			return sel, fmt.Errorf("selector %q: the value of %s: %w", s, name, err)
		}
		if op == "=~" || op == "!~" {
			if _, err := regexp.Compile("^(?:" + val + ")$"); err != nil {
				return sel, fmt.Errorf("selector %q: the regular expression of %s: %w", s, name, err)
			}
		}
		sel.Matchers = append(sel.Matchers, Matcher{Name: name, Op: op, Value: val})
		rest = strings.TrimSpace(rest[n:])
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return sel, fmt.Errorf("selector %q: want ',' between matchers at %q", s, rest)
		}
		rest = strings.TrimSpace(rest[1:])
	}
	if sel.Metric == "" && len(sel.Matchers) == 0 {
		return sel, fmt.Errorf("selector %q selects nothing; want label matchers such as instance=\"db1:9100\"", s)
	}
	return sel, nil
}

// quoted reads a quoted string at the start of s: its value and length.
func quoted(s string) (string, int, error) {
	if s == "" || s[0] != '"' && s[0] != '`' {
		return "", 0, fmt.Errorf("want a quoted value (\"...\") at %q", s)
	}
	q := s[0]
	for i := 1; i < len(s); i++ {
		if s[i] == '\\' && q == '"' {
			i++
			continue
		}
		if s[i] == q {
			v, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return "", 0, fmt.Errorf("%s: %w", s[:i+1], err)
			}
			return v, i + 1, nil
		}
	}
	return "", 0, fmt.Errorf("unterminated quote in %q", s)
}

// Labels renders the matchers alone, with extra ones appended, for use
// inside a PromQL selector's braces.
func (s Selector) Labels(extra ...string) string {
	parts := make([]string, 0, len(s.Matchers)+len(extra))
	for _, m := range s.Matchers {
		parts = append(parts, m.Name+m.Op+strconv.Quote(m.Value))
	}
	return strings.Join(append(parts, extra...), ",")
}

// Of is the selector of metric with s's matchers and extra ones.
func (s Selector) Of(metric string, extra ...string) string {
	return metric + "{" + s.Labels(extra...) + "}"
}

// String writes the selector back as PromQL.
func (s Selector) String() string { return s.Of(s.Metric) }
