package ycsb

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/engine/search/searchtest"
	"github.com/scalelab/scalelab/scenario"
)

// The conformance suite runs on every engine of Engines(), opened without a
// target: the search engines then open a 1-node cluster of their
// distribution that the test binary starts on first use (and that stops
// when it exits). Without the launcher jars or a JDK, opening fails saying
// what to install (`make java`), as the postgres engine's tests do without
// PostgreSQL.
func init() {
	searchtest.UseShared()
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		corrupters[name] = corruptSearch
		open := openers[name]
		openers[name] = func(ctx context.Context, env scenario.Env, cfg *config) (store, error) {
			st, err := open(ctx, env, cfg)
			if err != nil {
				return nil, err
			}
			return refreshingScans{st.(*searchStore), new(atomic.Bool)}, nil
		}
	}
}

// refreshingScans refreshes the index before a scan that follows a write:
// scans are searches, which see writes only after a refresh, and the suite
// checks that a scan sees every insert acknowledged before it.
type refreshingScans struct {
	*searchStore
	dirty *atomic.Bool
}

func (r refreshingScans) scan(ctx context.Context, start []byte, n, field int, res *result) error {
	if r.dirty.Swap(false) {
		if err := r.c.Refresh(ctx, r.index); err != nil {
			return err
		}
	}
	return r.searchStore.scan(ctx, start, n, field, res)
}

func (r refreshingScans) update(ctx context.Context, key []byte, field int, vals [][]byte) error {
	defer r.dirty.Store(true)
	return r.searchStore.update(ctx, key, field, vals)
}

func (r refreshingScans) insert(ctx context.Context, key []byte, vals [][]byte) error {
	defer r.dirty.Store(true)
	return r.searchStore.insert(ctx, key, vals)
}

func corruptSearch(t *testing.T, c engine.Conn, key string) {
	sc := c.(*search.Conn)
	index := sc.IndexName(searchIndex, "")
	if err := sc.UpdateDoc(context.Background(), index, key, "", []byte(`{"field0":"garbage"}`)); err != nil {
		t.Fatal(err)
	}
	// Scans see the change after a refresh.
	if err := sc.Refresh(context.Background(), index); err != nil {
		t.Fatal(err)
	}
}

// TestSearchInstalled fails under CI when a search engine cannot run, since
// the conformance suite then leaves it out.
func TestSearchInstalled(t *testing.T) {
	t.Parallel()
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		t.Run(name, func(t *testing.T) { searchtest.Require(t, name) })
	}
}

// TestSearchRejectsUserRouting checks the clear error for settings ycsb
// cannot honour.
func TestSearchRejectsUserRouting(t *testing.T) {
	t.Parallel()
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			searchtest.Require(t, name)
			e := openEngine(t, name, name+".routing=user")
			_, err := (&Scenario{}).Open(context.Background(), scenario.Env{Engine: name, Conn: e.conn, Settings: e.set, Seed: 1})
			if err == nil {
				t.Fatal("routing=user accepted")
			}
		})
	}
}
