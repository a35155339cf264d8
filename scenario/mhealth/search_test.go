package mhealth

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// TestConformanceSearch runs the suite where searches see every
// acknowledged write (refresh after each), on both distributions, and on
// OpenSearch also with one index per patient and routing by patient.
func TestConformanceSearch(t *testing.T) {
	t.Parallel()
	scenariotest.EachSearchEngine(t, func(t *testing.T, name string) {
		conformance(t, name, name+".refresh=true", KeyHoursPerWeek+"=12")
	})
	t.Run("opensearch-per-user-routed", func(t *testing.T) {
		t.Parallel()
		conformance(t, search.OpenSearch, "opensearch.refresh=true", "opensearch.index_layout=per_user", "opensearch.routing=user", "opensearch.shards=2", KeyHoursPerWeek+"=12")
	})
}

// oneWeekOnOpenSearch opens mhealth on OpenSearch with sets, loads one
// patient and lives its week of 8 hours in one session, failing t on any
// operation's error.
func oneWeekOnOpenSearch(t *testing.T, sets ...string) *Workload {
	t.Helper()
	ctx := context.Background()
	w, _ := openEngine(t, search.OpenSearch, append([]string{KeyWeeks + "=1", KeyHoursPerWeek + "=8", KeyPatients + "=1"}, sets...)...)
	if err := w.Load(ctx, 1, func(int64) {}); err != nil {
		t.Fatal(err)
	}
	s := w.NewSession(0, 5).(*Session)
	for {
		op, ok := s.Next()
		if !ok {
			return w
		}
		if err := s.Do(ctx); err != nil {
			t.Fatalf("%s: %v", operationNames[op], err)
		}
	}
}

// TestStaleReadsWithPeriodicRefresh: with the default 1 s refresh, reads
// right after a post miss it (stale, counted, not errors), and once the
// index is refreshed every total is right.
func TestStaleReadsWithPeriodicRefresh(t *testing.T) {
	t.Parallel()
	w := oneWeekOnOpenSearch(t) // stale reads are no errors by default
	if w.stale[OpTotalsGet].Load() == 0 || w.stale[OpAchievementsGet].Load() == 0 {
		t.Fatalf("no stale reads with a 1 s refresh: %v", w.Report())
	}
	if err := w.Check(context.Background()); err != nil {
		t.Fatalf("check after refresh: %v", err)
	}
}

// TestRefreshAllAfterWrite: the study's manual-refresh client
// (mhealth.refresh_after_write=all) refreshes every index after each
// write, so that with the default 1 s refresh interval and no wait every
// totals read right after a post sees it.
func TestRefreshAllAfterWrite(t *testing.T) {
	t.Parallel()
	w := oneWeekOnOpenSearch(t, KeyRefreshAfter+"="+RefreshAll)
	if st, fr := w.stale[OpTotalsGet].Load(), w.fresh[OpTotalsGet].Load(); st != 0 || fr != 8 {
		t.Fatalf("totals after a refresh of every index: %d stale, %d fresh, want 0 and 8", st, fr)
	}
}
