// Package yamlerr turns the YAML parser's syntax errors about a file a
// user wrote into messages that say what to change: a tab in the
// indentation, which the parser reports as "found character that cannot
// start any token", becomes "a tab character; YAML indents with spaces
// only", at the tab's line and column. Every reader of a user's YAML
// (experiment files, study files, telemetry mappings) goes through it.
package yamlerr

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// TabMessage is what a tab in the indentation is called.
const TabMessage = "a tab character; YAML indents with spaces only (replace the tab with spaces)"

// TabError is a tab character in the indentation of a YAML file.
type TabError struct {
	File string // the file, as the user named it
	Line int    // 1-based
	Col  int    // 1-based, the tab's column
}

// Error formats the error as FILE:LINE:COL: a tab character; ...
func (e *TabError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, TabMessage)
}

// lineRE finds the line the parser names in a syntax error.
var lineRE = regexp.MustCompile(`\bline (\d+)\b`)

// Line is the line a yaml.v3 syntax error names (0 when it names none).
func Line(err error) int {
	if err == nil {
		return 0
	}
	m := lineRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Tab returns a *TabError when err, the parser's error for data, comes
// from a tab in the indentation, else nil. The parser names the line of
// the token before the tab or the tab's own line, so a tab on the named
// line or the next one is taken first; a parser error about tabs without
// one there takes the first indentation tab before it. A tab inside a
// value (after a key, in a block of text) is no error and is never taken.
func Tab(file string, data []byte, err error) *TabError {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if !strings.Contains(msg, "tab character") && !strings.Contains(msg, "cannot start any token") {
		return nil
	}
	at := Line(err)
	tabs := indentTabs(data)
	for _, t := range tabs {
		if at == 0 || t.Line == at || t.Line == at+1 {
			t.File = file
			return &t
		}
	}
	if strings.Contains(msg, "tab character") {
		for _, t := range tabs {
			if t.Line <= at+1 {
				t.File = file
				return &t
			}
		}
	}
	return nil
}

// indentTabs lists the first tab in the leading white space of each line.
func indentTabs(data []byte) []TabError {
	var out []TabError
	for i, line := range bytes.Split(data, []byte("\n")) {
		for j, c := range line {
			if c == '\t' {
				out = append(out, TabError{Line: i + 1, Col: j + 1})
				break
			}
			if c != ' ' {
				break
			}
		}
	}
	return out
}
