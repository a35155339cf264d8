package records

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cache"
	"github.com/scalelab/scalelab/httpload"
	"github.com/scalelab/scalelab/scenario/scenariotest"
)

// TestStudyPath: records.mix=study makes every session the study's 11
// requests in the study's order, nothing else, with think time up to
// records.think_page before each page and up to records.think_form
// before each post (never more, never before a check).
func TestStudyPath(t *testing.T) {
	set := scenariotest.Settings(t, &Scenario{}, "records.mix=study", "records.think_page=2s", "records.think_form=5s", "records.revisit=0.9", "records.csrf_probe=1")
	cfg, err := configFrom(set)
	if err != nil || !cfg.study {
		t.Fatalf("records.mix=study: %+v, %v", cfg, err)
	}
	w := &workload{cfg: cfg, counter: httpload.NewCounter(), cacheStats: cache.NewStats()}
	posts := map[string]bool{"signup": true, "medical_post": true, "share": true, "delete_account": true}
	for id := uint64(1); id <= 50; id++ {
		s := newSession(w, id, 42)
		var got []string
		for {
			op, ok := s.Next()
			if !ok {
				break
			}
			got = append(got, opNames[op])
			d, _ := s.Think()
			max, kind := 2*time.Second, thinkPage
			if posts[opNames[op]] {
				max, kind = 5*time.Second, thinkForm
			}
			if s.cur.think != kind || d < 0 || d >= max {
				t.Errorf("session %d, %s: think %v (kind %d), want up to %v", id, opNames[op], d, s.cur.think, max)
			}
		}
		if len(got) != len(StudyPath) {
			t.Fatalf("session %d: %d requests %v, want the study's %d %v", id, len(got), got, len(StudyPath), StudyPath)
		}
		for i := range got {
			if got[i] != StudyPath[i] {
				t.Fatalf("session %d: request %d is %s, want %s (%v)", id, i+1, got[i], StudyPath[i], got)
			}
		}
	}
	if len(StudyPath) != 11 {
		t.Errorf("the study's path has %d requests, want 11", len(StudyPath))
	}
	if err := set.Apply("records.mix=studdy"); err == nil || !strings.Contains(err.Error(), `did you mean "study"`) {
		t.Errorf("records.mix=studdy: %v, want refused with a did-you-mean", err)
	}
}

// TestDBBound: records.db_bound lowers the bcrypt cost, grows the seed
// and the providers page (by name), except where a setting is given.
func TestDBBound(t *testing.T) {
	for _, c := range []struct {
		sets                      []string
		cost, providers, patients int
		page                      int
		byName                    bool
	}{
		{nil, 10, 10000, 5000, 5, false},
		{[]string{"records.db_bound=true"}, dbBoundCost, dbBoundProviders, dbBoundPatients, dbBoundPageProviders, true},
		{[]string{"records.db_bound=true", "records.bcrypt_cost=6", "records.providers=5000"}, 6, 5000, dbBoundPatients, dbBoundPageProviders, true},
	} {
		cfg, err := configFrom(scenariotest.Settings(t, &Scenario{}, c.sets...))
		if err != nil {
			t.Fatal(err)
		}
		st := cfg.store(nil)
		if cfg.cost != c.cost || cfg.providers != c.providers || cfg.patients != c.patients || st.pageN != c.page || st.pageByName != c.byName {
			t.Errorf("%v: cost %d, %d providers, %d patients, page of %d (by name %v)", c.sets, cfg.cost, cfg.providers, cfg.patients, st.pageN, st.pageByName)
		}
		if got := st.pageOrder(); (got == "u.name, u.id") != c.byName {
			t.Errorf("%v: order %q", c.sets, got)
		}
	}
}

// FuzzParseMix: records.mix never panics; what it accepts is the study's
// path or cumulative weights that grow and add up to more than 0.
func FuzzParseMix(f *testing.F) {
	for _, s := range []string{"study", " study ", defaultMixValue, "signup:1", "provider:0,returning:2", "studdy", "signup:-1", "signup:x", ",,", "signup:1e308,provider:1e308", "signup:NaN", "provider:+Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		study, mix, err := parseMix(raw)
		if err != nil {
			if study || err.Error() == "" {
				t.Fatalf("%q: study %v with error %v", raw, study, err)
			}
			return
		}
		if !study && !(mix[0] <= mix[1] && mix[1] <= mix[2] && mix[2] > 0 && !math.IsInf(mix[2], 0)) {
			t.Fatalf("%q: weights %v", raw, mix)
		}
	})
}
