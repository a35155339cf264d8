package ycsb

import (
	"context"
	"fmt"
	"testing"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// TestAuditReadBack runs audited workload-d sessions (reads and inserts)
// on every storing engine, then the audit's read-back: every acknowledged
// insert is found (0 lost) and keys never inserted are absent, in both key
// orders. (Run in parallel on one engine, a second run recreating the table
// made the first one's inserts disappear: the audit reported them lost.)
//
// Not parallel with the other tests: postgres and the search engines keep
// one usertable per server for the whole package, which the conformance
// suite recreates; the engines run in parallel with each other.
func TestAuditReadBack(t *testing.T) {
	for _, name := range storingEngines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// One after the other: both use the engine's one table.
			for _, order := range []string{"hashed", "ordered"} {
				t.Run(order, func(t *testing.T) { auditReadBack(t, name, order) })
			}
			t.Run("updates", func(t *testing.T) { auditUpdates(t, name) })
		})
	}
	// null stores nothing: it cannot read back.
	e := openEngine(t, "null")
	w := e.Workload(t, "ycsb.workload=d")
	if err := w.ReadBack(context.Background(), nil, nil); err == nil {
		t.Error("null: ReadBack probe succeeded; want errors.ErrUnsupported")
	}
}

func auditReadBack(t *testing.T, name, order string) {
	ctx := context.Background()
	e := openEngine(t, name)
	w := e.Workload(t, "ycsb.workload=d", "ycsb.insert_order="+order, "ycsb.records=200", "ycsb.session_ops=0")
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.ReadBack(ctx, nil, nil); err != nil {
		t.Fatalf("ReadBack probe: %v", err)
	}
	h, _ := scenariotest.AuditedSessions(t, w, 3, 400, 50, nil)
	scenariotest.ReadBackAll(t, h, w, 29)
	ids := []int64{int64(w.ctr.Last()) + 1, int64(w.ctr.Last()) + 1000, 5}
	present := make([]bool, len(ids))
	if err := w.ReadBack(ctx, ids, present); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(present) != "[false false true]" {
		t.Errorf("present %v for key numbers %v (never inserted, never inserted, loaded)", present, ids)
	}
}

// auditUpdates runs audited workload-a sessions (reads and updates of one
// field) on an engine, then the register read-back: every updated field
// holds the version of its last acknowledged update (or of one that
// overlapped it): none lost.
func auditUpdates(t *testing.T, name string) {
	ctx := context.Background()
	e := openEngine(t, name)
	w := e.Workload(t, "ycsb.workload=a", "ycsb.records=200", "ycsb.session_ops=0", "ycsb.verify=true")
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	// Concurrent updates of one record may be refused whole (a search
	// engine's version conflict): known not applied.
	h, _ := scenariotest.AuditedSessions(t, w, 3, 300, 70, func(err error) bool { return metrics.ClassOf(err) == metrics.Rejected })
	if h.RegisterWrites() < 100 {
		t.Fatalf("%d updates logged: workload a should update about half the time", h.RegisterWrites())
	}
	a, err := audit.CheckRegisters(ctx, h, w, audit.CheckConfig{Batch: 37})
	if err != nil {
		t.Fatal(err)
	}
	lost := a.Lost
	if p, _ := enginetest.Lookup(name); p.LosesUpdates != "" && lost > 0 {
		t.Logf("%s: %d of %d acknowledged updates lost, as expected: %s", name, lost, a.Acknowledged, p.LosesUpdates)
		lost = 0
	}
	if !a.Checked || lost != 0 || a.Resurrected != 0 || a.Keys == 0 || a.ReadBack != a.Keys || a.Unknown != 0 || a.Acknowledged < a.Writes*9/10 {
		t.Fatalf("register audit %+v: want the updates acknowledged (or refused whole) and read back, none lost", a)
	}
}
