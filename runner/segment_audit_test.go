package runner

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	_ "github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/segment"
)

// TestSegmentsAuditUpdates: two segments of one ycsb test update the same
// loaded keys in one SQLite file. Each hands out its own versions, and a
// key the other segment wrote last is counted foreign, not lost.
func TestSegmentsAuditUpdates(t *testing.T) {
	t.Parallel()
	f := newYCSBFile(t, 200)
	// both segments must be ready before the common start, or their
	// second of load may not overlap: a busy machine takes a while to
	// open them
	at := time.Now().Add(2 * time.Second)
	docs := make([]*results.Run, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		p := f.plan(t, fmt.Sprintf("shard-%d", i), Options{Users: 2, Given: map[string]bool{"users": true},
			Sets: []string{"ycsb.workload=a"}, Duration: time.Second, Segment: segment.Segment{Index: i, Count: 2}, StartAt: at})
		wg.Add(1)
		go func() {
			defer wg.Done()
			docs[i], _ = p.Execute(context.Background(), Quiet{}, io.Discard, io.Discard)
		}()
	}
	wg.Wait()
	var foreign int64
	for i, d := range docs {
		if d.Status != results.StatusOK {
			t.Fatalf("segment %d: status %s: %v %s", i, d.Status, d.Failures, d.Error)
		}
		a := d.Audit
		if a == nil || a.Registers == nil || !a.Registers.Checked || a.Registers.Lost != 0 || a.Lost != 0 {
			t.Fatalf("segment %d: audit %+v registers %+v", i, a, a.Registers)
		}
		foreign += a.Registers.Foreign
	}
	if foreign == 0 {
		t.Error("no register was last written by the other segment: the test did not overlap")
	}
}
