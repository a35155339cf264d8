package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/metrics"
)

// The live line counts what the summary's total counts: an operation made
// of others (a session's whole visit) is left out of its ops/s and p99.
func TestProgressLiveLineLeavesOutComposites(t *testing.T) {
	t.Parallel()
	coll := metrics.NewCollector(metrics.Config{Ops: []string{"read", "visit"}, Composite: map[string]bool{"visit": true}})
	p := newProgress(io.Discard, "off")
	p.coll = coll
	ops := []metrics.OpStats{{Name: "read", Lat: metrics.NewHist()}, {Name: "visit", Lat: metrics.NewHist()}}
	for range 100 {
		_ = ops[0].Lat.RecordValue(1e6) // 1 ms
	}
	for range 50 {
		_ = ops[1].Lat.RecordValue(900e6) // 900 ms
	}
	if err := p.Interval(&metrics.Interval{StartNs: 0, EndNs: 1e9, Ops: ops}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.live, "100 ops/s  p99 1") {
		t.Errorf("live line %q; want 100 ops/s with a p99 of about 1 ms (the visits left out)", p.live)
	}
}
