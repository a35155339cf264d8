package search_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/recordstest"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/engine/search/searchtest"
	"github.com/scalelab/scalelab/setting"
)

// openPrefix connects to the distribution's shared test cluster with
// <engine>.index_prefix=prefix and the settings, and deletes the indices
// under prefix when t ends.
func openPrefix(t testing.TB, name, prefix string, settings ...string) *search.Conn {
	t.Helper()
	searchtest.Require(t, name)
	target, err := searchtest.Shared(name)
	if err != nil {
		enginetest.Unavailable(t, name, err, "make java")
	}
	e, err := engine.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	set := setting.NewSet(e.Settings()...)
	for _, kv := range append([]string{name + "." + search.SetIndexPrefix + "=" + prefix, name + ".replicas=0", name + ".refresh=true"}, settings...) {
		if err := set.Apply(kv); err != nil {
			t.Fatal(err)
		}
	}
	c := enginetest.OpenEngine(t, name, engine.Config{Target: target, Settings: set}).(*search.Conn)
	t.Cleanup(func() { // the user's indices too
		if names, _, err := c.Indices(context.Background(), prefix+"*"); err == nil && len(names) > 0 {
			_, _, _ = c.Do(context.Background(), http.MethodDelete, "/"+strings.Join(names, ","), "", nil)
		}
	})
	return c
}

// TestOwnership plants a user's index of the name a run's collection
// uses (a document in it) and checks that the run is refused with the
// document intact, that another prefix proceeds, and that
// replace_existing replaces it; then that a delete by pattern refuses an
// unmarked index that matches it and deletes nothing, and that
// EnsureIndex refuses a user's index too.
func TestOwnership(t *testing.T) {
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		t.Run(name, func(t *testing.T) { ownership(t, name) })
	}
}

func ownership(t *testing.T, name string) {
	ctx := context.Background()
	prefix, other := enginetest.Name()+"-", enginetest.Name()+"-"
	admin := openPrefix(t, name, prefix)
	put := func(t testing.TB, index string) {
		for _, req := range [][2]string{{http.MethodPut, "/" + index}, {http.MethodPut, "/" + index + "/_doc/alice?refresh=true"}} {
			body := []byte(`{"settings":{"number_of_replicas":0}}`)
			if req[1] != "/"+index {
				body = []byte(`{"v":"precious"}`)
			}
			path, query, _ := strings.Cut(req[1], "?")
			if code, data, err := admin.Do(ctx, req[0], path, query, body); err != nil || code >= 300 {
				t.Fatalf("%s %s: %d %s %v", req[0], req[1], code, data, err)
			}
		}
	}
	intact := func(t testing.TB, index string) bool {
		src, err := admin.GetDoc(ctx, index, "alice", "", "")
		var doc map[string]string
		return err == nil && json.Unmarshal(src, &doc) == nil && doc["v"] == "precious"
	}
	recordstest.Ownership(t, recordstest.Owned{
		Engine: name, Name: "usertable", Object: prefix + "usertable",
		Plant:  func(t testing.TB) { put(t, prefix+"usertable") },
		Intact: func(t testing.TB) bool { return intact(t, prefix+"usertable") },
		Open:   func(t testing.TB, s ...string) engine.Records { return openPrefix(t, name, prefix, s...) },
		Other:  func(t testing.TB) engine.Records { return openPrefix(t, name, other) },
	})

	// mhealth's pattern: one index is scalelab's, one a user's
	put(t, prefix+"mh-notes")
	if err := admin.CreateIndex(ctx, prefix+"mh-plan", nil, nil); err != nil {
		t.Fatal(err)
	}
	var no *engine.NotOwnedError
	if err := admin.DeleteIndex(ctx, prefix+"mh-*"); !errors.As(err, &no) || no.Name != prefix+"mh-notes" || no.Namespace != name+".index_prefix" {
		t.Fatalf("delete %smh-* over a user's index: %v", prefix, err)
	}
	if names, foreign, err := admin.Indices(ctx, prefix+"mh-*"); err != nil || len(names) != 2 || len(foreign) != 1 {
		t.Fatalf("after a refused delete by pattern: %v (unmarked %v), %v; want both indices kept", names, foreign, err)
	}
	if !intact(t, prefix+"mh-notes") {
		t.Fatal("the user's mh-notes lost its document")
	}
	if err := admin.EnsureIndex(ctx, prefix+"mh-notes", nil, nil); !errors.Is(err, engine.ErrNotOwned) {
		t.Fatalf("ensure a user's index: %v, want ErrNotOwned", err)
	}
	if err := admin.Claim(ctx, prefix+"mh-plan"); err != nil {
		t.Fatalf("claim of an index scalelab created: %v", err)
	}
}
