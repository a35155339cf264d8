package search

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	es "github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/engine/search/searchtest"
	"github.com/scalelab/scalelab/load"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

// TestThreadsThroughEntryNode runs the study's load, scaled down, on the
// real server: a thread group of 5 users over a 200 ms ramp-up with 20
// loops each is exactly 100 match_all searches (one loop is one request),
// every one of them sent to the node entry_nodes names, with their
// operations in flight counted.
func TestThreadsThroughEntryNode(t *testing.T) {
	t.Parallel()
	searchtest.Require(t, es.Elasticsearch)
	target, err := searchtest.Shared(es.Elasticsearch)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := engine.Lookup(es.Elasticsearch)
	plain, err := e.Open(context.Background(), engine.Config{Target: target, Settings: setting.NewSet(e.Settings()...)})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := plain.(*es.Conn).CatNodes(context.Background())
	plain.Close()
	if err != nil || len(nodes) == 0 {
		t.Fatalf("nodes: %v %v", nodes, err)
	}
	name := nodes[0].Name
	w, c, err := open(t, es.Elasticsearch, KeyOrders+"=200", fmt.Sprintf("%s.%s=%s", es.Elasticsearch, es.SetEntryNodes, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Load(context.Background(), 2, func(int64) {}); err != nil {
		t.Fatal(err)
	}
	before := c.RequestsPerNode()
	coll := metrics.NewCollector(metrics.Config{Ops: w.Operations(), InFlight: metrics.NewInFlight()})
	m := &load.Threads{Users: 5, RampUp: 200 * time.Millisecond, Loops: 20}
	run, err := load.NewRun(w, coll, m, load.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	coll.Begin()
	stop, done := make(chan struct{}), make(chan error)
	go func() { done <- coll.Run(stop) }()
	run.Execute(context.Background())
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	totals, _, measured := coll.Totals()
	var count, errs int64
	for _, s := range metrics.Summarize(totals, measured, coll.InFlight()) {
		count, errs = count+s.Count, errs+s.Errors
	}
	if count != 100 || errs != 0 || run.StopReason() != "completed" {
		t.Errorf("%d searches, %d errors, stop %q; want 5 users x 20 loops = 100, no error, completed", count, errs, run.StopReason())
	}
	after := c.RequestsPerNode()
	if len(after) != 1 || after[name]-before[name] != 100 {
		t.Errorf("client's requests per node %v (before the run %v), want 100 more to %s alone", after, before, name)
	}
	if mean, most, ok := coll.InFlightTotals(); !ok || most < 1 || most > 5 || mean <= 0 {
		t.Errorf("in flight: mean %.2f max %d (%v), want a max of 1..5", mean, most, ok)
	}
}
