package social

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/scenario"
)

func init() {
	openers[search.OpenSearch] = openSearch
	openers[search.Elasticsearch] = openSearch
}

// searchIndex is the index holding the users collection.
const searchIndex = "social_users"

// searchMappings index only "uid" (the user's key, a keyword, for scans in
// key order); the profile stays in _source, unindexed: the study read
// users by _id only.
var searchMappings = json.RawMessage(`{"dynamic":false,"properties":{"uid":{"type":"keyword"}}}`)

// searchStore keeps each user as a document whose id is the user's key,
// with the key also in "uid". Reads by id are real time; scans and counts
// are searches, so they see writes after the next refresh (the engine's
// refresh setting; count refreshes first).
type searchStore struct {
	c     *search.Conn
	index string
}

func openSearch(ctx context.Context, env scenario.Env, cfg *config) (store, error) {
	c, err := asConn[*search.Conn](env)
	if err != nil {
		return nil, err
	}
	o := c.Options()
	if o.Routing != search.RoutingNone || o.Layout != search.LayoutShared {
		return nil, fmt.Errorf("social on %s: %s.routing=%s and %s.index_layout=%s: the users collection is one index and scans span every user; use routing=none and index_layout=shared",
			env.Engine, env.Engine, o.Routing, env.Engine, o.Layout)
	}
	s := &searchStore{c: c, index: c.IndexName(searchIndex, "")}
	create := c.EnsureIndex
	if cfg.load {
		create = c.CreateIndex
	}
	if err := create(ctx, s.index, searchMappings, nil); err != nil {
		return nil, fmt.Errorf("social on %s: %w", env.Engine, err)
	}
	return s, nil
}

// searchDoc is the user's document with "uid" first.
func searchDoc(u *User) []byte {
	doc := u.Doc()
	out := make([]byte, 0, len(doc)+len(u.ID)+10)
	out = append(out, `{"uid":`...)
	out = search.AppendJSONString(out, u.ID)
	out = append(out, ',')
	return append(out, doc[1:]...)
}

func (s *searchStore) read(ctx context.Context, key string, u *User) error {
	src, err := s.c.GetDoc(ctx, s.index, key, "", "")
	if err != nil {
		return err
	}
	return decodeUser(key, src, u)
}

func (s *searchStore) update(ctx context.Context, key, status string, lastSeen int64) error {
	return s.c.UpdateDoc(ctx, s.index, key, "", patchDoc(status, lastSeen))
}

// insert creates the document, failing (HTTP 409) if the user exists.
func (s *searchStore) insert(ctx context.Context, u *User) error {
	return s.c.CreateDoc(ctx, s.index, u.ID, "", searchDoc(u))
}

func (s *searchStore) remove(ctx context.Context, key string) error {
	path := "/" + url.PathEscape(s.index) + "/_doc/" + url.PathEscape(key)
	query := ""
	if p := s.c.RefreshParam(); p != "" {
		query = "refresh=" + p
	}
	status, body, err := s.c.Do(ctx, http.MethodDelete, path, query, nil)
	switch {
	case err != nil:
		return err
	case status == http.StatusNotFound:
		return fmt.Errorf("delete %s/%s: %w", s.index, key, engine.ErrNotFound)
	case status >= 300:
		return metrics.WithClass(metrics.Other, fmt.Errorf("DELETE %s: HTTP %d: %.200s", path, status, body))
	}
	return nil
}

func (s *searchStore) scan(ctx context.Context, start string, n int, fn func(u *User) error) error {
	body := fmt.Sprintf(`{"size":%d,"query":{"range":{"uid":{"gte":%s}}},"sort":[{"uid":"asc"}]}`, n, search.AppendJSONString(nil, start))
	r, err := s.c.Search(ctx, s.index, []byte(body), "")
	if err != nil {
		return err
	}
	var u User
	for _, h := range r.Hits.Hits {
		if err := decodeUser(h.ID, h.Source, &u); err != nil {
			return err
		}
		if err := fn(&u); err != nil {
			return err
		}
	}
	return nil
}

// insertBatch writes a load batch in _bulk requests of the engine's bulk
// size.
func (s *searchStore) insertBatch(ctx context.Context, users []User) error {
	var bb search.BulkBuilder
	size := s.c.Options().BulkSize
	for i := range users {
		bb.Index(s.index, users[i].ID, "", searchDoc(&users[i]))
		if bb.Len() >= size || i == len(users)-1 {
			if err := s.c.Bulk(ctx, &bb, true); err != nil {
				return err
			}
			bb.Reset()
		}
	}
	return nil
}

// afterLoad refreshes the index (and force-merges it with
// <engine>.force_merge), so scans see every loaded user whatever the
// refresh setting.
func (s *searchStore) afterLoad(ctx context.Context) error { return s.c.AfterLoad(ctx, s.index) }

// count refreshes the index, then counts its documents.
func (s *searchStore) count(ctx context.Context) (int64, error) {
	if err := s.c.Refresh(ctx, s.index); err != nil {
		return 0, err
	}
	return s.c.Count(ctx, s.index, nil, "")
}

// maxKey refreshes the index, then searches for the highest uid.
func (s *searchStore) maxKey(ctx context.Context) (string, error) {
	if err := s.c.Refresh(ctx, s.index); err != nil {
		return "", err
	}
	r, err := s.c.Search(ctx, s.index, []byte(`{"size":1,"_source":false,"sort":[{"uid":"desc"}]}`), "")
	if err != nil || len(r.Hits.Hits) == 0 {
		return "", err
	}
	return r.Hits.Hits[0].ID, nil
}

func (s *searchStore) close() error { return nil }
