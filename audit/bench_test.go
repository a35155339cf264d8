package audit

import (
	"path/filepath"
	"sync/atomic"
	"testing"
)

// BenchmarkLogWrite is the audit's cost per audited write: an invocation
// line and an outcome line, each appended under a shard lock, with the
// flusher writing the file in the background. Parallel, as the load
// model's workers run.
func BenchmarkLogWrite(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "history.log"), 8)
	if err != nil {
		b.Fatal(err)
	}
	var sess, ids atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		l := w.Log(uint64(sess.Add(1)))
		for pb.Next() {
			id := ids.Add(1)
			l.Writing(id, 1)
			l.Done(nil)
		}
	})
	b.StopTimer()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLogRead is the cost of a Done after an operation that wrote
// nothing (a read): what every non-writing operation pays.
func BenchmarkLogRead(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "history.log"), 8)
	if err != nil {
		b.Fatal(err)
	}
	l := w.Log(0)
	for b.Loop() {
		l.Done(nil)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}
