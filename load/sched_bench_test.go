package load

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/scalelab/scalelab/metrics"
)

// BenchmarkSchedulerWake schedules a million jobs due over ten seconds
// (100,000 wake-ups a second, as a million sessions thinking 10 s make;
// each job an 88-byte record as a phases session's is) and reports how
// late they started: p99 lag, the share later than
// metrics.LateThresholdNs, and the heap bytes per waiting job. Targets
// (2 cores, otherwise idle): lag p99 < 10 ms, < 1 % late.
func BenchmarkSchedulerWake(b *testing.B) {
	const n = 1_000_000
	const window = 10 * time.Second
	type job struct {
		_   [80]byte // the size of a phases session's record
		due int64
	}
	for range b.N {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(n)
		lags := metrics.NewHist()
		var mu sync.Mutex
		var late int64
		s := NewScheduler(0, 0, stop, func(_ *job, due int64) {
			lag := metrics.Now() - due
			mu.Lock()
			lags.RecordValue(max(lag, 0)) //nolint:errcheck // within the histogram's range
			if lag > metrics.LateThresholdNs {
				late++
			}
			mu.Unlock()
			wg.Done()
		})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		base := metrics.Now() + int64(2*time.Second) // after the scheduling below
		for i := range n {
			due := base + int64(window)*int64(i)/n
			s.At(uint64(i), due, &job{due: due})
		}
		runtime.ReadMemStats(&after)
		s.Start()
		wg.Wait()
		close(stop)
		s.Wait()
		b.ReportMetric(float64(lags.ValueAtQuantile(99))/1e6, "lag-p99-ms")
		b.ReportMetric(100*float64(late)/n, "late-%")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/job")
	}
}
