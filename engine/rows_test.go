package engine

import "testing"

// TestRowsAddValues: every field in order, or one field by its index; nil
// values stay unset.
func TestRowsAddValues(t *testing.T) {
	var r Rows
	r.Reset(3)
	all := r.AddValues([]byte("a"), -1, [][]byte{[]byte("x"), nil, []byte("z")})
	one := r.AddValues([]byte("b"), 2, [][]byte{[]byte("y")})
	if r.Len() != 2 || string(r.Key(all)) != "a" || string(r.Key(one)) != "b" {
		t.Fatalf("rows %d, keys %q %q", r.Len(), r.Key(0), r.Key(1))
	}
	for _, c := range []struct {
		i, f int
		want string
		ok   bool
	}{{all, 0, "x", true}, {all, 1, "", false}, {all, 2, "z", true}, {one, 0, "", false}, {one, 1, "", false}, {one, 2, "y", true}} {
		if v, ok := r.Value(c.i, c.f); ok != c.ok || string(v) != c.want {
			t.Errorf("row %d field %d: %q %t, want %q %t", c.i, c.f, v, ok, c.want, c.ok)
		}
	}
}
