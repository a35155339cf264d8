package audit

import (
	"path/filepath"
	"testing"
)

// BenchmarkReadHistory reads the history of one million acknowledged
// item writes into the compact sets of ids the read-back uses.
func BenchmarkReadHistory(b *testing.B) {
	path := filepath.Join(b.TempDir(), "history.log")
	w := mustCreate(b, path, 8)
	const writes = 1_000_000
	for i := range int64(writes) {
		l := w.Log(uint64(i))
		l.Writing(i, 1)
		l.Done(nil)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		h, err := ReadFile(path)
		if err != nil || h.ItemWrites() != writes {
			b.Fatalf("%v, %d item writes", err, h.ItemWrites())
		}
	}
}
