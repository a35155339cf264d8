package social

import (
	"github.com/scalelab/scalelab/scenario/kit"
	"github.com/scalelab/scalelab/scenario/scenariotest"

	"context"
	"testing"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/engine"
)

// auditedRun loads users, runs four audited sessions of the test mix
// (inserts, updates and deletes included) and returns the history.
func auditedRun(t *testing.T, w *Workload) (*audit.History, []audit.RegWrite) {
	t.Helper()
	ctx := context.Background()
	if err := w.Load(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	w.ops = kit.NewChooser(testMix[:])
	h, path := scenariotest.AuditedSessions(t, w, 4, 300, 100, func(error) bool { return true })
	var regs []audit.RegWrite
	if err := audit.WalkFile(path, func(audit.Span) {}, func(r audit.RegWrite) { regs = append(regs, r) }); err != nil {
		t.Fatal(err)
	}
	return h, regs
}

// Every insert, update and delete of the audited sessions reads back as
// the register check expects: 0 lost, 0 resurrected, on each storing
// engine that runs without a server.
func TestAuditRegisters(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := openEngine(t, name).Workload(t, KeyUsers+"=300")
			h, regs := auditedRun(t, w)
			dels := 0
			for _, r := range regs {
				if r.Delete && r.Outcome == audit.OK {
					dels++
				}
			}
			if len(regs) < 300 || dels == 0 {
				t.Fatalf("%d register writes, %d acknowledged deletes: the mix should write and delete", len(regs), dels)
			}
			a, err := audit.CheckRegisters(context.Background(), h, w, audit.CheckConfig{})
			if err != nil {
				t.Fatal(err)
			}
			if !a.Checked || a.Lost != 0 || a.Resurrected != 0 || a.Keys == 0 || a.ReadBack != a.Keys {
				t.Errorf("audit %+v: want every key read back, none lost", a)
			}
		})
	}
}

// A deleted user written back behind the scenario's back is caught as
// resurrected, and an update overwritten with an older status as lost.
func TestAuditCatchesResurrectionAndLostUpdate(t *testing.T) {
	t.Parallel()
	e := openEngine(t, "memory")
	w := e.Workload(t, KeyUsers+"=300")
	h, regs := auditedRun(t, w)
	last := map[int64]audit.RegWrite{}
	for _, r := range regs {
		if r.Outcome == audit.OK {
			if p, ok := last[r.Key]; !ok || r.Inv > p.End {
				last[r.Key] = r
			}
		}
	}
	var deleted, updated int64 = -1, -1
	for k, r := range last {
		switch {
		case r.Delete && deleted < 0:
			deleted = k
		case !r.Delete && !r.Insert && updated < 0 && k < 300:
			updated = k
		}
	}
	if deleted < 0 || updated < 0 {
		t.Fatalf("no user whose last write was a delete (%d) or an update (%d)", deleted, updated)
	}
	// Behind the scenario's back, through the engine's records: the
	// deleted user comes back, the updated one loses its update.
	ctx := context.Background()
	c, err := e.Conn.(engine.Records).Collection(ctx, engine.CollectionSpec{Name: usersCollection, Fields: userFields})
	if err != nil {
		t.Fatal(err)
	}
	back := NewUser(42, uint64(deleted))
	if err := c.Insert(ctx, []byte(back.ID), values(&back)); err != nil {
		t.Fatal(err)
	}
	old := NewUser(42, uint64(updated))
	if err := c.Update(ctx, []byte(old.ID), nil, values(&old)); err != nil {
		t.Fatal(err)
	}
	a, err := audit.CheckRegisters(ctx, h, w, audit.CheckConfig{Settle: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a.Resurrected != 1 || a.Lost != 1 {
		t.Fatalf("audit %+v: want 1 resurrected (user %d) and 1 lost (user %d)", a, deleted, updated)
	}
	kinds := map[int64]string{}
	for _, ex := range a.Examples {
		kinds[ex.Key] = ex.Kind
	}
	if kinds[deleted] != "resurrected" || kinds[updated] != "lost" {
		t.Errorf("examples %+v: want user %d resurrected and %d lost", a.Examples, deleted, updated)
	}
}
