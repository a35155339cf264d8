package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestNotOwnedError checks that the refusal names every object, both ways
// on, and is a configuration error.
func TestNotOwnedError(t *testing.T) {
	for _, tc := range []struct {
		err  *NotOwnedError
		want []string
	}{
		{&NotOwnedError{Engine: "postgres", Kind: "table", Name: "scalelab.mh_plan", Namespace: "postgres.schema",
			Also: ObjectNames([]string{"mh_totals"}, func(n string) string { return "scalelab." + n })},
			[]string{"table scalelab.mh_plan exists", "(nor scalelab.mh_totals)", "--set postgres.schema=NAME", "--set postgres.replace_existing=true"}},
		{&NotOwnedError{Engine: "sqlite", Kind: "table", Name: "usertable in user.db"},
			[]string{"table usertable in user.db exists", "another target", "--set sqlite.replace_existing=true"}},
	} {
		msg := tc.err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q lacks %q", msg, w)
			}
		}
		if tc.err.Also == nil && strings.Contains(msg, "(nor") {
			t.Errorf("%q names other objects it has none of", msg)
		}
		if !errors.Is(tc.err, ErrNotOwned) || !errors.Is(tc.err, ErrConfig) {
			t.Errorf("%v is not ErrNotOwned and ErrConfig", tc.err)
		}
	}
	if ObjectNames[string](nil, nil) != nil {
		t.Error("no objects: want no names")
	}
	if !IsMark(Mark("ycsb", "r1")) || IsMark("the app's users") {
		t.Error("IsMark does not tell scalelab's mark")
	}
}
