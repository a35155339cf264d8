package audit

import (
	"context"
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

// BenchmarkRegisterLog is the audit's cost per audited update: an
// invocation line with its version and time, then the outcome line.
func BenchmarkRegisterLog(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "history.log"), 8)
	if err != nil {
		b.Fatal(err)
	}
	var sess, keys atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		l := w.Log(uint64(sess.Add(1)))
		for pb.Next() {
			l.Updating(keys.Add(1)%1_000_000, false)
			l.Done(nil)
		}
	})
	b.StopTimer()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCheckRegisters1M reads back and checks 1 M updated keys (two
// acknowledged writes each) against an in-memory store: the checker's own
// cost, without a store's latency.
func BenchmarkCheckRegisters1M(b *testing.B) {
	const n = 1_000_000
	h := &History{Registers: make([]RegWrite, 0, 2*n)}
	store := make(fakeRegs, n)
	for k := range int64(n) {
		h.Registers = append(h.Registers, RegWrite{Key: k, Version: 2*k + 1, Inv: k, End: k + 5, Outcome: OK},
			RegWrite{Key: k, Version: 2*k + 2, Inv: k + 10, End: k + 15, Outcome: OK})
		store[k] = 2*k + 2
	}
	for b.Loop() {
		a, err := CheckRegisters(context.Background(), h, store, CheckConfig{Workers: 4})
		if err != nil || a.Lost != 0 || a.ReadBack != n {
			b.Fatalf("audit %+v, %v", a, err)
		}
	}
}
