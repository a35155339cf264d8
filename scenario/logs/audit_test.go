package logs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// TestAuditReadBack runs audited sessions of single and bulk writes on
// every engine of the conformance suite, then the audit's read-back: every
// acknowledged record is found (0 lost), ids never written are absent, and
// a record deleted behind the scenario's back is reported lost.
func TestAuditReadBack(t *testing.T) {
	t.Parallel()
	names := make([]string, 0, len(testEngines))
	for n := range testEngines {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			auditReadBack(t, name)
		})
	}
}

func auditReadBack(t *testing.T, name string) {
	ctx := context.Background()
	e := openEnv(t, name)
	w := e.workload(t, "logs.records=300", "logs.mix=write:6,write_bulk:1,read:2", "logs.batch_size=25")
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.ReadBack(ctx, nil, nil); err != nil {
		t.Fatalf("ReadBack probe: %v (every logs engine must read back)", err)
	}
	h, path := scenariotest.AuditedSessions(t, w, 3, 40, 100, func(err error) bool { return errors.Is(err, engine.ErrNotFound) })
	e.settle(t)
	scenariotest.ReadBackAll(t, h, w, 37)
	// Ids never written are absent.
	issued := w.ids.issued.Load()
	ids := []int64{issued + 5, issued + 1000, 0}
	present := make([]bool, len(ids))
	if err := w.ReadBack(ctx, ids, present); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(present) != "[false false true]" {
		t.Errorf("present %v for ids %v (never written, never written, loaded)", present, ids)
	}
	// A record deleted behind the scenario's back is lost.
	var acked []int64
	if err := audit.WalkFile(path, func(s audit.Span) {
		if s.Outcome == audit.OK {
			acked = append(acked, s.First)
		}
	}, func(audit.RegWrite) {}); err != nil {
		t.Fatal(err)
	}
	victim := acked[len(acked)/2]
	e.te.exec(t, e.conn, fmt.Sprintf("DELETE FROM logs WHERE id = %d", victim))
	a, err := audit.Check(ctx, h, w, audit.CheckConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Lost != 1 || fmt.Sprint(a.LostIDs) != fmt.Sprintf("[%d]", victim) {
		t.Errorf("after deleting record %d: lost %d %v", victim, a.Lost, a.LostIDs)
	}
}
