package social

import (
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/scenario/kit"
	"github.com/scalelab/scalelab/scenario/scenariotest"

	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/null"
	"github.com/scalelab/scalelab/metrics"
)

// openEngine opens a fresh store of engine name from its test provider
// with assignments applied to the engine's and the scenario's settings.
func openEngine(t testing.TB, name string, assignments ...string) *scenariotest.Store[*Workload] {
	t.Helper()
	return scenariotest.NewStore[*Workload](t, &Scenario{}, name, assignments...)
}

// testMix does every operation often, so that a short run exercises
// inserts, deletes and scans, which the study's mixes make rare.
var testMix = [numOps]float64{OpRead: 0.4, OpUpdate: 0.2, OpInsert: 0.15, OpDelete: 0.1, OpScan: 0.15}

// suite sizes the conformance suite: users loaded and operations per
// session (four sessions run in parallel).
type suite struct{ users, ops int }

// fullSuite is the size for engines whose scans see writes at once;
// engines that need Strict settings for it (a search index refreshed after
// every write) and slow ones (enginetest.Provider.Slow) run smallSuite to
// keep CI short.
var (
	fullSuite  = suite{users: 2000, ops: 250}
	smallSuite = suite{users: 200, ops: 40}
)

// conformanceSized is the suite every engine implementing social passes:
// load, read back, scans, concurrent sessions with every operation and the
// friend walk, the end-of-run check, and lost or foreign writes caught.
func conformanceSized(t *testing.T, name string, size suite, assignments ...string) {
	ctx := context.Background()
	conformanceUsers := int64(size.users)
	start := time.Now()
	phase := func(what string) { t.Logf("%s done after %.1fs", what, time.Since(start).Seconds()) }
	e := openEngine(t, name, assignments...)
	phase("open")
	w := e.Workload(t, fmt.Sprint(KeyUsers, "=", conformanceUsers), KeyKeys+"=social", KeyGraphM+"=4", KeyMaxScanLength+"=30")
	scenariotest.LoadAll(t, w, 3, conformanceUsers)
	if n, err := w.st.count(ctx); err != nil || n != conformanceUsers {
		t.Fatalf("count after load: %d (%v)", n, err)
	}

	phase("load")
	// Every loaded user reads back whole.
	var u User
	for k := range uint64(conformanceUsers) {
		if err := w.st.read(ctx, Key(k), &u); err != nil {
			t.Fatalf("reading loaded user %d: %v", k, err)
		}
		if want := NewUser(42, k); u != want {
			t.Fatalf("user %d reads back as %+v, want %+v", k, u, want)
		}
	}

	phase("read-back")
	// Scans return users in key order from the start key, as many as asked
	// (stores scanning in their own order, Cassandra's token order: distinct
	// users, the start user first when it exists).
	all := make([]string, conformanceUsers)
	for k := range all {
		all[k] = Key(uint64(k))
	}
	for _, start := range []string{all[0], all[17], all[conformanceUsers-3], "u", "u00000009999", "v"} {
		var got []string
		err := w.st.scan(ctx, start, 30, func(u *User) error {
			got = append(got, u.ID)
			return w.verify(mustKeyNumber(t, u.ID), u)
		})
		if err != nil {
			t.Fatalf("scan(%s): %v", start, err)
		}
		i, found := slices.BinarySearch(all, start)
		want := all[i:min(i+30, len(all))]
		if !w.keyOrdered {
			distinct := slices.Clone(got)
			slices.Sort(distinct)
			if len(got) > 30 || len(slices.Compact(distinct)) != len(got) || (found && (len(got) == 0 || got[0] != start)) {
				t.Fatalf("scan(%s, 30) in store order: %d users %.3v", start, len(got), got)
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Fatalf("scan(%s, 30): %d users %.3v, want %d %.3v", start, len(got), got, len(want), want)
		}
	}

	// An update changes the status and last_seen, and nothing else.
	if err := w.st.update(ctx, Key(5), "gone fishing", 1234); err != nil {
		t.Fatal(err)
	}
	if err := w.st.read(ctx, Key(5), &u); err != nil {
		t.Fatal(err)
	}
	want := NewUser(42, 5)
	want.Status, want.LastSeen = "gone fishing", 1234
	if u != want {
		t.Fatalf("after update: %+v, want %+v", u, want)
	}

	phase("scans and update")
	// Sessions in parallel doing every operation: the only errors are
	// not_found of users another session deleted meanwhile.
	w.ops = kit.NewChooser(testMix[:])
	const sessions = 4
	ops := size.ops
	counts := scenariotest.ConcurrentSessions(t, w, sessions, ops, 1000, func(s scenario.Session, _ int, err error) bool {
		return errors.Is(err, engine.ErrNotFound) && w.ks.isGone(s.(*Session).n) && metrics.ClassOf(err) == metrics.NotFound
	})
	for op := range numOps {
		if counts[op] == 0 {
			t.Errorf("no %s in %d operations", operationNames[op], sessions*ops)
		}
	}
	if t.Failed() {
		return
	}
	phase("sessions")
	if err := w.Check(ctx); err != nil {
		t.Fatalf("check after the sessions: %v", err)
	}
	rep := w.Report()
	users := rep["users"].(map[string]any)
	if users["inserted"].(int64) == 0 || users["deleted"].(int64) == 0 || users["insert_failed"].(int64) != 0 || users["delete_failed"].(int64) != 0 {
		t.Errorf("report: %v", users)
	}
	walk := rep["walk"].(map[string]any)
	if walk["friend_steps"].(int64) == 0 || walk["starts"].(int64) != sessions {
		t.Errorf("walk report: %v", walk)
	}

	// Inserted users read back; deleted ones are gone.
	for k := uint64(0); k < w.ks.size(); k++ {
		err := w.st.read(ctx, Key(k), &u)
		switch {
		case w.ks.isGone(k):
			if !errors.Is(err, engine.ErrNotFound) || metrics.ClassOf(err) != metrics.NotFound {
				t.Fatalf("deleted user %d: read %v", k, err)
			}
		case err != nil:
			t.Fatalf("user %d: %v", k, err)
		case u.Name != nameOf(42, k):
			t.Fatalf("user %d named %q", k, u.Name)
		}
	}

	phase("check and read-back")
	// A loaded user deleted behind the scenario's back is a lost write: the
	// session's read says integrity, and so does the check.
	victim := uint64(0)
	for w.ks.isGone(victim) {
		victim++
	}
	if err := w.st.remove(ctx, Key(victim)); err != nil {
		t.Fatal(err)
	}
	s := w.NewSession(99, 99).(*Session)
	s.op, s.prepared, s.n, s.key = OpRead, true, victim, Key(victim)
	if err := s.Do(ctx); !errors.Is(err, engine.ErrIntegrity) || metrics.ClassOf(err) != metrics.Integrity {
		t.Errorf("read of a lost user: %v (class %v)", err, metrics.ClassOf(err))
	}
	if err := w.Check(ctx); !errors.Is(err, engine.ErrIntegrity) {
		t.Errorf("check with a lost user: %v", err)
	}
	// A user stored under another's key is a foreign write.
	impostor := NewUser(42, uint64(conformanceUsers)+500)
	impostor.ID = Key(victim)
	if err := w.st.insert(ctx, &impostor); err != nil {
		t.Fatal(err)
	}
	s.op, s.prepared = OpRead, true
	if err := s.Do(ctx); !errors.Is(err, engine.ErrIntegrity) || impostor.Name == nameOf(42, victim) {
		t.Errorf("read of a user with another's document: %v", err)
	}
	// Reopening without a load counts what is there and checks the delta.
	w2 := e.Workload(t, KeyLoad+"=false", KeyKeys+"=uniform")
	if w2.baseCount != conformanceUsers+w.insertsOK.Load()-w.deletesOK.Load() {
		t.Errorf("reopened: %d users counted", w2.baseCount)
	}
	if err := w2.Check(ctx); err != nil {
		t.Errorf("check of the reopened workload: %v", err)
	}
	// Its inserts continue after the highest user stored (every insert
	// of w has settled: size is the number its next insert takes).
	wantNext := uint64(conformanceUsers)
	for k := w.ks.size() - 1; k >= uint64(conformanceUsers); k-- {
		if !w.ks.isGone(k) {
			wantNext = k + 1
			break
		}
	}
	if next := w2.ks.take(); next != wantNext {
		t.Errorf("reopened: inserts start at %d, want %d", next, wantNext)
	}
}

func mustKeyNumber(t *testing.T, key string) uint64 {
	n, ok := KeyNumber(key)
	if !ok {
		t.Fatalf("bad key %q", key)
	}
	return n
}

// TestConformance runs the suite on every engine of Engines() that stores
// data, each from its test provider (engine/enginetest).
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, name := range (&Scenario{}).Engines() {
		p, ok := enginetest.Lookup(name)
		if !ok {
			t.Errorf("engine %s has no test provider: register one (engine/enginetest)", name)
			continue
		}
		if name == null.Name {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			size := fullSuite
			if len(p.Strict) > 0 || p.Slow {
				size = smallSuite
			}
			conformanceSized(t, name, size, p.Strict...)
		})
	}
}
