package logs

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// The search engines run the conformance suite on a 1-node cluster of their
// distribution that the test binary starts on first use (and that stops
// when it exits); each test gets its own index prefix, dropped at its end.
func init() {
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		testEngines[name] = &testEngine{
			exec:   execSearch,
			settle: settleSearch,
		}
	}
	// Both distributions share the storage code: one runs the variant in
	// which searches see every acknowledged write (refresh after each).
	testEngines[search.OpenSearch].variants = [][]string{{"opensearch.refresh=true", "opensearch.shards=2"}}
}

var (
	sqlUpdate = regexp.MustCompile(`^UPDATE logs SET (\w+) = '([^']*)' WHERE id = (\d+)$`)
	sqlDelete = regexp.MustCompile(`^DELETE FROM logs WHERE id = (\d+)$`)
)

// execSearch runs the suite's SQL statements (the two forms it uses) as
// document updates and deletes, then refreshes.
func execSearch(t *testing.T, c engine.Conn, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	sc := c.(*search.Conn)
	index := sc.IndexName(searchIndex, "")
	for _, s := range stmts {
		if m := sqlUpdate.FindStringSubmatch(s); m != nil {
			doc, _ := json.Marshal(map[string]string{m[1]: m[2]})
			if err := sc.UpdateDoc(ctx, index, m[3], "", doc); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			continue
		}
		if m := sqlDelete.FindStringSubmatch(s); m != nil {
			status, body, err := sc.Do(ctx, "DELETE", "/"+index+"/_doc/"+m[1], "", nil)
			if err != nil || status != 200 {
				t.Fatalf("%s: HTTP %d %s %v", s, status, body, err)
			}
			continue
		}
		t.Fatalf("execSearch: statement %q not understood", s)
	}
	settleSearch(t, c)
}

// settleSearch refreshes the index: every acknowledged write is then
// searchable.
func settleSearch(t *testing.T, c engine.Conn) {
	t.Helper()
	sc := c.(*search.Conn)
	if err := sc.Refresh(context.Background(), sc.IndexName(searchIndex, "")); err != nil {
		t.Fatal(err)
	}
}

// TestSearchFreshness shows the refresh delay: with a periodic refresh a
// probe's records become visible only after some polls (the study's "about
// half a second" with the default 1 s interval), with refresh=true at the
// first. Three probes each: one may get lucky and meet a refresh at once.
func TestSearchFreshness(t *testing.T) {
	t.Parallel()
	scenariotest.EachSearchEngine(t, func(t *testing.T, name string) {
		for _, c := range []struct {
			refresh string
			check   func(mean, mx float64) bool
		}{
			{"interval:1s", func(mean, _ float64) bool { return mean > 1 }},
			{"true", func(_, mx float64) bool { return mx == 1 }},
		} {
			e := openEnv(t, name, name+".refresh="+c.refresh)
			w := e.workload(t, "logs.records=100", "logs.freshness_records=200", "logs.freshness_rate=0",
				"logs.freshness_poll=20ms", "logs.freshness_max_polls=500")
			if err := w.Load(context.Background(), 2, nil); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				freshnessProbe(t, w.newSession(uint64(3+i)))
			}
			f := w.Report()["freshness"].(map[string]any)
			polls := f["polls"].(map[string]any)
			mean, _ := strconv.ParseFloat(fmt.Sprint(polls["mean"]), 64)
			mx, _ := strconv.ParseFloat(fmt.Sprint(polls["max"]), 64)
			t.Logf("%s refresh=%s: delay %v ms, polls %v", name, c.refresh, f["delay_ms"], polls)
			if f["probes"] != 3 || !c.check(mean, mx) {
				t.Errorf("refresh=%s: %v probes, polls mean %g, max %g", c.refresh, f["probes"], mean, mx)
			}
		}
	})
}
