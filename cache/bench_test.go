package cache

import (
	"testing"
	"time"
)

// BenchmarkStatsRecord is the cost of counting one operation's cache
// event, from all of GOMAXPROCS goroutines at once (the run's sessions).
func BenchmarkStatsRecord(b *testing.B) {
	s := NewStats()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.Record("read", Event{Hit: true, Cache: time.Microsecond, CacheCalls: 1})
		}
	})
}
