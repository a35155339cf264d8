package setting

import "testing"

func TestGetter(t *testing.T) {
	specs := []Spec{{Key: "a.n", Kind: Int, Default: "3", Min: 0, Max: 10}, {Key: "a.s", Kind: String, Default: "x"}}
	if got := Getter(nil, specs)("a.n").Int(); got != 3 {
		t.Fatalf("nil set: %d", got)
	}
	set := NewSet(specs[0])
	if err := set.Apply("a.n=7"); err != nil {
		t.Fatal(err)
	}
	get := Getter(set, specs)
	if get("a.n").Int() != 7 || get("a.s").String() != "x" {
		t.Fatalf("given %d, default %q", get("a.n").Int(), get("a.s").String())
	}
}
