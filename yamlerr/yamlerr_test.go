package yamlerr

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestTab checks that a tab in the indentation is reported at its line
// and column, and that YAML errors of other kinds and tabs inside values
// are left alone.
func TestTab(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc       string
		line, col int // 0: no tab error
	}{
		{"a:\n\tb: 1\n", 2, 1},
		{"a: 1\n\tb: 2\n", 2, 1},
		{"a:\n  b: 1\n\t c: 2\n", 3, 1},
		{"a:\n  - x\n\t- y\n", 3, 1},
		{"a:\n  b:\n  \t\tc: 1\n", 3, 3},
		{"a: [1, 2\n", 0, 0},
		{"a: |\n  x\n  \ty\nb: [\n", 0, 0},
		{"a: `x`\n", 0, 0},
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.doc), &n)
		if err == nil {
			t.Fatalf("%q parsed", tc.doc)
		}
		te := Tab("f.yaml", []byte(tc.doc), err)
		switch {
		case tc.line == 0 && te != nil:
			t.Errorf("%q (%v): got %v, want no tab error", tc.doc, err, te)
		case tc.line != 0 && (te == nil || te.Line != tc.line || te.Col != tc.col):
			t.Errorf("%q (%v): got %v, want line %d column %d", tc.doc, err, te, tc.line, tc.col)
		case te != nil && !strings.HasPrefix(te.Error(), "f.yaml:") || te != nil && !strings.Contains(te.Error(), TabMessage):
			t.Errorf("%q: message %q", tc.doc, te.Error())
		}
	}
	if Tab("f.yaml", []byte("a: 1"), nil) != nil || Tab("f.yaml", []byte("\ta"), errors.New("other")) != nil {
		t.Error("a tab error without a parser error about tabs")
	}
}
