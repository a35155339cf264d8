package social

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/engine/search/searchtest"
	"github.com/scalelab/scalelab/scenario"
)

// The search engines run the suite on a 1-node cluster per distribution
// that the test binary starts on first use and stops when it exits; each
// test gets its own index prefix. Without the launcher jars or a JDK the
// tests skip naming `make java` (under CI=true they fail).
var searchSeq atomic.Int64

func init() {
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		servers[name] = func(t testing.TB, cfg engine.Config) engine.Config {
			searchtest.Require(t, name)
			target, err := searchtest.Shared(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Settings.Apply(fmt.Sprintf("%s.index_prefix=soc%d-", name, searchSeq.Add(1))); err != nil {
				t.Fatal(err)
			}
			cfg.Target = target
			return cfg
		}
	}
}

// TestConformanceSearch runs the suite on both distributions with a
// refresh after every write, so that scans (searches) see each
// acknowledged write as the suite expects.
func TestConformanceSearch(t *testing.T) {
	t.Parallel()
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conformanceSized(t, name, suite{users: 200, ops: 40}, name+".refresh=true")
		})
	}
}

// TestSearchRejectsUserRouting checks the clear error for settings the
// users collection cannot honour.
func TestSearchRejectsUserRouting(t *testing.T) {
	t.Parallel()
	name := search.OpenSearch
	e := openEngine(t, name, name+".routing=user")
	_, err := (&Scenario{}).Open(context.Background(), scenario.Env{Engine: name, Conn: e.conn, Settings: e.set, Seed: 1})
	if err == nil {
		t.Fatal("routing=user accepted")
	}
	t.Log(err)
}
