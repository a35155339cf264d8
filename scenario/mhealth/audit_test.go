package mhealth

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/scenariotest"
)

func TestActivityID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ patient, start int64 }{{0, Epoch.UnixMilli()}, {12345, Epoch.UnixMilli() + 3600_000*500}, {1 << 30, 4_000_000_000_000}} {
		p, s := splitActivityID(activityID(c.patient, c.start))
		if p != c.patient || s != c.start {
			t.Errorf("activityID(%d, %d) splits into %d, %d", c.patient, c.start, p, s)
		}
	}
}

// TestAuditReadBack lives audited patients through a week on every
// storing engine, then runs the audit's read-back: every acknowledged
// activity post is found (0 lost), and activities never posted are absent.
func TestAuditReadBack(t *testing.T) {
	t.Parallel()
	for _, name := range (&Scenario{}).Engines() {
		if name == "null" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			auditReadBack(t, name)
		})
	}
	// behind a cache the sessions' store is the cache's decorator; the
	// audit reads the store itself
	t.Run("sqlite behind a cache", func(t *testing.T) {
		t.Parallel()
		auditReadBack(t, "sqlite", "cache.mode=local")
	})
}

func auditReadBack(t *testing.T, name string, sets ...string) {
	ctx := context.Background()
	w, _ := openEngine(t, name, append([]string{KeyWeeks + "=1", KeyHoursPerWeek + "=30", KeyPatients + "=2"}, sets...)...)
	if len(sets) > 0 && w.cacheMode == cache.Off {
		t.Fatalf("%v: no cache in front of the store", sets)
	}
	if err := w.Load(ctx, 2, func(int64) {}); err != nil {
		t.Fatal(err)
	}
	if err := w.ReadBack(ctx, nil, nil); err != nil {
		t.Fatalf("ReadBack probe: %v", err)
	}
	path := filepath.Join(t.TempDir(), "history.log")
	hw, err := audit.Create(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	var last Activity
	for id := uint64(0); id < 3; id++ { // 2 loaded patients, 1 created by its session
		s := w.NewSession(id, id+1)
		l := hw.Log(id)
		s.(scenario.Audited).SetWriteLog(l)
		for {
			op, ok := s.Next()
			if !ok {
				break
			}
			err := s.Do(ctx)
			l.Done(err)
			if err != nil {
				t.Fatalf("session %d: %s: %v", id, operationNames[op], err)
			}
		}
		last = s.(*Session).act
	}
	if err := hw.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := audit.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	scenariotest.ReadBackAll(t, h, w, 17)
	posts, plans, marks := 0, 0, 0
	if err := audit.WalkFile(path, func(sp audit.Span) {
		switch _, _, what, _ := splitPlanItemID(sp.First); {
		case sp.First >= 0:
			posts++
		case what == planSaved:
			plans++
		default:
			marks++
		}
	}, func(audit.RegWrite) {}); err != nil {
		t.Fatal(err)
	}
	if posts != 3*30 || plans != 3 || marks == 0 {
		t.Fatalf("%d posts, %d plans, %d done marks audited: want 90 posts, 3 plans and done marks", posts, plans, marks)
	}
	ids := []int64{activityID(2, last.Start), activityID(2, last.Start+3600_000*1000), activityID(77, last.Start),
		planItemID(2, 0, planSaved, 0), planItemID(2, 0, exerciseDone, 200), planItemID(77, 0, planSaved, 0)}
	present := make([]bool, len(ids))
	if err := w.ReadBack(ctx, ids, present); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(present) != "[true false false true false false]" {
		t.Errorf("present %v (posted, never posted, no such patient; plan saved, item never marked, no such patient)", present)
	}
}

func TestPlanItemIDs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		patient           int64
		week, what, items int
	}{{0, 0, planSaved, 0}, {1 << 30, 1023, educationDone, 255}, {12345, 7, exerciseDone, 3}} {
		id := planItemID(c.patient, c.week, c.what, c.items)
		p, w, what, item := splitPlanItemID(id)
		if id >= 0 || p != c.patient || w != c.week || what != c.what || item != c.items {
			t.Errorf("%+v -> %d -> %d %d %d %d", c, id, p, w, what, item)
		}
	}
}
