package engine

import (
	"fmt"
	"testing"
)

// TestFieldStatements: a statement is built once per list of fields and
// kept apart from other lists'.
func TestFieldStatements(t *testing.T) {
	var c FieldStatements
	builds := 0
	build := func(fields []int) string { builds++; return fmt.Sprint("UPDATE ", fields) }
	for range 3 {
		if q := c.Get([]int{1, 3}, build); q != "UPDATE [1 3]" {
			t.Fatalf("Get(1, 3) = %q", q)
		}
	}
	if q := c.Get([]int{13}, build); q != "UPDATE [13]" {
		t.Fatalf("Get(13) = %q", q)
	}
	if builds != 2 {
		t.Errorf("%d builds, want 2 (one per list of fields)", builds)
	}
	args := TextUpdateArgs([]int{2}, [][]byte{[]byte("a"), []byte("b"), []byte("c")})
	if fmt.Sprint(AppendTextRecord(args, []byte("k"), nil)) != "[c k]" || cap(args) != 2 {
		t.Errorf("update arguments %v (capacity %d), want [c] with room for the key", args, cap(args))
	}
}
