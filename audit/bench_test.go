package audit

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// benchLog times body on a fresh history file of 8 shards; closing it
// (the last flush) is not timed.
func benchLog(b *testing.B, body func(w *Writer)) {
	w := mustCreate(b, filepath.Join(b.TempDir(), "history.log"), 8)
	body(w)
	b.StopTimer()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// benchParallelLog times op in parallel, as the load model's workers run,
// each worker logging as a session of its own; n numbers the operations
// from 1.
func benchParallelLog(b *testing.B, op func(l *Log, n int64)) {
	benchLog(b, func(w *Writer) {
		var sess, ops atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			l := w.Log(uint64(sess.Add(1)))
			for pb.Next() {
				op(l, ops.Add(1))
			}
		})
	})
}

// BenchmarkLogWrite is the audit's cost per audited write: an invocation
// line and an outcome line, each appended under a shard lock, with the
// flusher writing the file in the background.
func BenchmarkLogWrite(b *testing.B) {
	benchParallelLog(b, func(l *Log, id int64) {
		l.Writing(id, 1)
		l.Done(nil)
	})
}

// BenchmarkLogRead is the cost of a Done after an operation that wrote
// nothing (a read): what every non-writing operation pays.
func BenchmarkLogRead(b *testing.B) {
	benchLog(b, func(w *Writer) {
		l := w.Log(0)
		for b.Loop() {
			l.Done(nil)
		}
	})
}

// BenchmarkRegisterLog is the audit's cost per audited update: an
// invocation line with its version and time, then the outcome line.
func BenchmarkRegisterLog(b *testing.B) {
	benchParallelLog(b, func(l *Log, n int64) {
		l.Updating(n%1_000_000, false)
		l.Done(nil)
	})
}

// BenchmarkCheckRegisters1M reads back and checks 1 M updated keys (two
// acknowledged writes each) against an in-memory store: the checker's own
// cost, without a store's latency.
func BenchmarkCheckRegisters1M(b *testing.B) {
	const n = 1_000_000
	h := newHistory()
	store := make(fakeRegs, n)
	for k := range int64(n) {
		h.addRegister(RegWrite{Key: k, Version: 2*k + 1, Inv: k, End: k + 5, Outcome: OK})
		h.addRegister(RegWrite{Key: k, Version: 2*k + 2, Inv: k + 10, End: k + 15, Outcome: OK})
		store[k] = 2*k + 2
	}
	for b.Loop() {
		a, err := CheckRegisters(context.Background(), h, store, CheckConfig{Workers: 4})
		if err != nil || a.Lost != 0 || a.ReadBack != n {
			b.Fatalf("audit %+v, %v", a, err)
		}
	}
}

// BenchmarkHour is a simulated hour of a busy store: 50 M audited updates
// over 1 M keys by 16 sessions (1 in 1,000 with an unknown outcome, not
// applied by the store),
// logged through a Writer, streamed to its binary history file and
// checked as they complete, then the history's registers read back from
// an in-memory store. It reports the history file's bytes per write, the
// checker's memory per key (MB of the live History) and the process's
// peak resident memory (VmHWM).
func BenchmarkHour(b *testing.B) {
	const (
		writes   = 50_000_000
		keys     = 1_000_000
		sessions = 16
	)
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "history.bin")
		w := mustCreate(b, path, 8)
		var wg sync.WaitGroup
		last := make([]atomic.Int64, keys) // the last acknowledged version of each key (0: initial)
		for s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := w.Log(uint64(s))
				x := uint64(s)*0x9e3779b97f4a7c15 + 1
				for i := range writes / sessions {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					k := int64(x%(keys/sessions))*sessions + int64(s) // each session its own keys: the last acknowledged write is final
					v := l.Updating(k, false)
					if i%1000 == 999 {
						l.Done(context.DeadlineExceeded)
						continue
					}
					l.Done(nil)
					last[k].Store(v)
				}
			}()
		}
		wg.Wait()
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		h := w.History()
		store := make(lastStore, keys)
		for k := range last {
			store[k] = last[k].Load()
		}
		a, err := CheckRegisters(context.Background(), h, store, CheckConfig{Workers: 4})
		if err != nil || a.Lost != 0 || a.Writes != writes {
			b.Fatalf("audit %+v, %v", a, err)
		}
		b.ReportMetric(float64(w.Size())/writes, "file-B/write")
		b.ReportMetric(float64(h.Bytes())/keys, "live-B/key")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
		b.ReportMetric(float64(writes)/b.Elapsed().Seconds(), "writes/s")
	}
}

// lastStore is a register store indexed by key: the version each holds.
type lastStore []int64

func (s lastStore) ReadVersions(_ context.Context, keys, versions []int64) error {
	for i, k := range keys {
		versions[i] = s[k]
	}
	return nil
}

// peakRSS is the process's peak resident memory in bytes (VmHWM), 0 when
// /proc does not say.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
