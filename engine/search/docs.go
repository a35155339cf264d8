package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/wait"
)

// IndexName returns the index of user's documents under base, after the
// engine's index prefix: base itself with the shared layout, base-<user>
// (lower case) with one index per user.
func (c *Conn) IndexName(base, user string) string {
	if c.opts.Layout == LayoutPerUser && user != "" {
		return c.opts.IndexPrefix + base + "-" + strings.ToLower(user)
	}
	return c.opts.IndexPrefix + base
}

// RoutingFor returns the routing value of user's documents: the user id
// with routing=user, else "" (route by document id).
func (c *Conn) RoutingFor(user string) string {
	if c.opts.Routing == RoutingUser {
		return user
	}
	return ""
}

// RefreshParam is the refresh parameter every write carries ("", "wait_for"
// or "true").
func (c *Conn) RefreshParam() string { return c.opts.Refresh.Param }

// IndexSettings returns the settings body of a new index: the engine's
// shards, replicas and refresh interval, plus extra ("index.*" keys).
func (c *Conn) IndexSettings(extra map[string]any) map[string]any {
	s := map[string]any{
		"index.number_of_shards":   c.opts.Shards,
		"index.number_of_replicas": c.opts.Replicas,
		"index.refresh_interval":   c.opts.Refresh.Interval,
	}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// CreateIndex (re)creates index with the engine's index settings, extra
// settings and mappings (the JSON object of "mappings"), and waits until
// every shard copy the cluster can place is active (green when there are
// enough data nodes for the replicas, else yellow with no shard still
// initializing): a replica recovering during the run would skew it. An
// existing index of that name is deleted first, once no write to it is
// running on the cluster (waitWritesDone says why); an existing index
// without scalelab's mark is refused first (DeleteIndex). The new index's
// mappings carry the mark (_meta.created_by).
func (c *Conn) CreateIndex(ctx context.Context, index string, mappings json.RawMessage, extra map[string]any) error {
	if err := c.Claim(ctx, index); err != nil {
		return err
	}
	mappings, err := c.markMappings(mappings)
	if err != nil {
		return fmt.Errorf("create index %s: %w", index, err)
	}
	if err := c.waitWritesDone(ctx, index); err != nil {
		return fmt.Errorf("create index %s: %w", index, err)
	}
	if err := c.DeleteIndex(ctx, index); err != nil {
		return err
	}
	body := map[string]any{"settings": c.IndexSettings(extra), "mappings": mappings}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("create index %s: %w", index, err)
	}
	// A node whose cluster state has not applied the deletion yet (the
	// client goes round robin; right after a partition heals, nodes lag)
	// answers that the index exists: delete again and retry a few times.
	for attempt := 1; ; attempt++ {
		err := c.call(ctx, http.MethodPut, "/"+url.PathEscape(index), "wait_for_active_shards=1", b, nil)
		if err == nil {
			break
		}
		if attempt == 10 || !strings.Contains(err.Error(), "resource_already_exists_exception") {
			return fmt.Errorf("create index %s: %w", index, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("create index %s: %w", index, ctx.Err())
		case <-time.After(time.Duration(attempt) * 300 * time.Millisecond):
		}
		if err := c.DeleteIndex(ctx, index); err != nil {
			return err
		}
	}
	return c.waitActive(ctx, index)
}

// waitActive waits until index has every shard copy the cluster's data
// nodes can hold.
func (c *Conn) waitActive(ctx context.Context, index string) error {
	nodes, err := c.CatNodes(ctx)
	if err != nil {
		return fmt.Errorf("wait for index %s: %w", index, err)
	}
	data := 0
	for _, n := range nodes {
		if strings.Contains(n.Roles, "d") {
			data++
		}
	}
	status := "yellow"
	if c.opts.Replicas < data {
		status = "green"
	}
	var h struct {
		Status       string `json:"status"`
		TimedOut     bool   `json:"timed_out"`
		Initializing int    `json:"initializing_shards"`
		Relocating   int    `json:"relocating_shards"`
		Unassigned   int    `json:"unassigned_shards"`
	}
	f := c.indexWait(fmt.Sprintf("index %s to be %s", index, status), 100*time.Millisecond,
		"a node may be down or out of disk (GET _cluster/allocation/explain says why shards are unassigned), or raise "+c.engine+"."+SetIndexWait)
	// each request waits up to 1 s on the server, so the wait ends soon
	// after its state changes
	q := "wait_for_status=" + status + "&wait_for_no_initializing_shards=true&wait_for_no_relocating_shards=true&timeout=1s"
	return f.Poll(ctx, func(ctx context.Context) (bool, string, error) {
		path := "/_cluster/health/" + url.PathEscape(index)
		code, data, err := c.Do(ctx, http.MethodGet, path, q, nil)
		if err != nil {
			return false, "", err
		}
		// 408: the health request's own timeout passed, its body says how far
		if code >= 300 && code != http.StatusRequestTimeout {
			return false, "", newHTTPError(http.MethodGet, path, code, data)
		}
		if err := json.Unmarshal(data, &h); err != nil {
			return false, "", fmt.Errorf("decode health: %w", err)
		}
		state := fmt.Sprintf("%s, %d initializing, %d relocating, %d unassigned shards", h.Status, h.Initializing, h.Relocating, h.Unassigned)
		return !h.TimedOut, state, nil
	})
}

// indexWait is a wait on an index, polled every every and bounded by
// <engine>.index_wait; hint says what to do when it runs out.
func (c *Conn) indexWait(what string, every time.Duration, hint string) wait.For {
	return wait.For{What: what, Bound: c.opts.IndexWait, Setting: c.engine + "." + SetIndexWait, Every: every, Hint: hint}
}

// EnsureIndex creates index as CreateIndex does unless it exists; an
// existing index without scalelab's mark is refused (Claim).
func (c *Conn) EnsureIndex(ctx context.Context, index string, mappings json.RawMessage, extra map[string]any) error {
	status, data, err := c.Do(ctx, http.MethodHead, "/"+url.PathEscape(index), "", nil)
	if err != nil {
		return fmt.Errorf("check index %s: %w", index, err)
	}
	switch status {
	case http.StatusOK:
		if _, foreign, err := c.Indices(ctx, index); err != nil || len(foreign) == 0 {
			return err
		}
		return c.CreateIndex(ctx, index, mappings, extra) // refused, or replaced with replace_existing
	case http.StatusNotFound:
		return c.CreateIndex(ctx, index, mappings, extra)
	}
	return fmt.Errorf("check index %s: %w", index, newHTTPError(http.MethodHead, "/"+index, status, data))
}

// Refresh makes every write to the indices matching pattern searchable.
func (c *Conn) Refresh(ctx context.Context, pattern string) error {
	if err := c.call(ctx, http.MethodPost, "/"+pattern+"/_refresh", "", nil, nil); err != nil {
		return fmt.Errorf("refresh %s: %w", pattern, err)
	}
	return nil
}

// ForceMerge merges the indices matching pattern down to one segment per
// shard (waiting until done).
func (c *Conn) ForceMerge(ctx context.Context, pattern string) error {
	if err := c.call(ctx, http.MethodPost, "/"+pattern+"/_forcemerge", "max_num_segments=1", nil, nil); err != nil {
		return fmt.Errorf("force merge %s: %w", pattern, err)
	}
	return nil
}

// AfterLoad prepares loaded indices for the run: it refreshes them, and
// force-merges them to one segment when <engine>.force_merge is set.
// Storage files call it at the end of their Load.
func (c *Conn) AfterLoad(ctx context.Context, pattern string) error {
	if err := c.Refresh(ctx, pattern); err != nil {
		return err
	}
	if c.opts.ForceMerge {
		if err := c.ForceMerge(ctx, pattern); err != nil {
			return err
		}
		return c.Refresh(ctx, pattern)
	}
	return nil
}

// docQuery builds the query string of a document request.
func docQuery(routing, refresh, extra string) string {
	var q []string
	if routing != "" {
		q = append(q, "routing="+url.QueryEscape(routing))
	}
	if refresh != "" {
		q = append(q, "refresh="+refresh)
	}
	if extra != "" {
		q = append(q, extra)
	}
	return strings.Join(q, "&")
}

// updateRetries is how often the server retries a partial update that lost
// a race with another write of the same document.
const updateRetries = "5"

func docPath(index, id, endpoint string) string {
	return "/" + url.PathEscape(index) + "/" + endpoint + "/" + url.PathEscape(id)
}

// IndexDoc writes doc (a JSON object) under id, replacing any document of
// that id, with the engine's refresh policy.
func (c *Conn) IndexDoc(ctx context.Context, index, id, routing string, doc []byte) error {
	return c.call(ctx, http.MethodPut, docPath(index, id, "_doc"), docQuery(routing, c.opts.Refresh.Param, ""), doc, nil)
}

// CreateDoc writes doc under id, failing with HTTP 409 if it exists.
func (c *Conn) CreateDoc(ctx context.Context, index, id, routing string, doc []byte) error {
	return c.call(ctx, http.MethodPut, docPath(index, id, "_create"), docQuery(routing, c.opts.Refresh.Param, ""), doc, nil)
}

// UpdateDoc merges partial (a JSON object) into the document id; a missing
// document is engine.ErrNotFound. The merge does not depend on what it
// replaces, so the server retries it on a version conflict with another
// writer of the same document (retry_on_conflict) rather than failing it.
func (c *Conn) UpdateDoc(ctx context.Context, index, id, routing string, partial []byte) error {
	body := make([]byte, 0, len(partial)+8)
	body = append(body, `{"doc":`...)
	body = append(body, partial...)
	body = append(body, '}')
	err := c.call(ctx, http.MethodPost, docPath(index, id, "_update"), docQuery(routing, c.opts.Refresh.Param, "retry_on_conflict="+updateRetries), body, nil)
	// A delete between the update's read and its write is a version
	// conflict "but no document was found": the document is gone.
	if metrics.ClassOf(err) == metrics.NotFound || (err != nil && strings.Contains(err.Error(), "no document was found")) {
		return fmt.Errorf("update %s/%s: %w", index, id, engine.ErrNotFound)
	}
	return err
}

// getResponse is the part of a GET _doc response we read.
type getResponse struct {
	Found  bool            `json:"found"`
	Source json.RawMessage `json:"_source"`
}

// GetDoc reads the _source of document id (real time, refresh or not);
// sourceIncludes limits the fields ("" for all). A missing document is
// engine.ErrNotFound.
func (c *Conn) GetDoc(ctx context.Context, index, id, routing, sourceIncludes string) (json.RawMessage, error) {
	extra := ""
	if sourceIncludes != "" {
		extra = "_source_includes=" + url.QueryEscape(sourceIncludes)
	}
	path := docPath(index, id, "_doc")
	status, data, err := c.Do(ctx, http.MethodGet, path, docQuery(routing, "", extra), nil)
	if err != nil {
		return nil, err
	}
	if status == http.StatusNotFound {
		if bytes.Contains(data, []byte(`"found":false`)) {
			return nil, fmt.Errorf("get %s/%s: %w", index, id, engine.ErrNotFound)
		}
		return nil, newHTTPError(http.MethodGet, path, status, data)
	}
	if status >= 300 {
		return nil, newHTTPError(http.MethodGet, path, status, data)
	}
	var r getResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("get %s/%s: decode: %w", index, id, err)
	}
	if !r.Found {
		return nil, fmt.Errorf("get %s/%s: %w", index, id, engine.ErrNotFound)
	}
	return r.Source, nil
}

// Hit is one search hit.
type Hit struct {
	Index   string          `json:"_index"`
	ID      string          `json:"_id"`
	Routing string          `json:"_routing"`
	Source  json.RawMessage `json:"_source"`
	Sort    []any           `json:"sort"`
}

// SearchResult is the part of a search response scenarios read.
type SearchResult struct {
	Took     int  `json:"took"`
	TimedOut bool `json:"timed_out"`
	Shards   struct {
		Total, Successful, Failed int
	} `json:"_shards"`
	Hits struct {
		Total struct {
			Value    int64  `json:"value"`
			Relation string `json:"relation"`
		} `json:"total"`
		Hits []Hit `json:"hits"`
	} `json:"hits"`
	Aggregations json.RawMessage `json:"aggregations"`
}

// Search runs a search (body: the JSON search request) on the indices
// matching index, limited to the shard of routing when it is not "". Shard
// failures are an error.
func (c *Conn) Search(ctx context.Context, index string, body []byte, routing string) (*SearchResult, error) {
	var r SearchResult
	if err := c.call(ctx, http.MethodPost, "/"+index+"/_search", docQuery(routing, "", ""), body, &r); err != nil {
		return nil, err
	}
	if r.Shards.Failed > 0 {
		return &r, metrics.WithClass(metrics.Other, fmt.Errorf("search %s: %d of %d shards failed", index, r.Shards.Failed, r.Shards.Total))
	}
	return &r, nil
}

// Count counts the documents matching query (a JSON query object, nil for
// all) in the indices matching index.
func (c *Conn) Count(ctx context.Context, index string, query []byte, routing string) (int64, error) {
	var body []byte
	if query != nil {
		body = append(append([]byte(`{"query":`), query...), '}')
	}
	var r struct {
		Count  int64 `json:"count"`
		Shards struct {
			Total, Failed int
		} `json:"_shards"`
	}
	if err := c.call(ctx, http.MethodPost, "/"+index+"/_count", docQuery(routing, "", ""), body, &r); err != nil {
		return 0, err
	}
	if r.Shards.Failed > 0 {
		return r.Count, metrics.WithClass(metrics.Other, fmt.Errorf("count %s: %d of %d shards failed", index, r.Shards.Failed, r.Shards.Total))
	}
	return r.Count, nil
}

// GetSettings returns the flat settings of index ("index.number_of_shards" ...).
func (c *Conn) GetSettings(ctx context.Context, index string) (map[string]string, error) {
	var r map[string]struct {
		Settings map[string]any `json:"settings"`
	}
	if err := c.call(ctx, http.MethodGet, "/"+url.PathEscape(index)+"/_settings", "flat_settings=true", nil, &r); err != nil {
		return nil, fmt.Errorf("settings of %s: %w", index, err)
	}
	out := map[string]string{}
	for _, v := range r {
		for k, s := range v.Settings {
			out[k] = fmt.Sprint(s)
		}
	}
	return out, nil
}

// ShardOf returns the shard number holding document id of index (asking the
// server with _search_shards, which applies routing as writes do).
func (c *Conn) ShardOf(ctx context.Context, index, id, routing string) (int, error) {
	q := "routing=" + url.QueryEscape(id)
	if routing != "" {
		q = "routing=" + url.QueryEscape(routing)
	}
	var r struct {
		Shards [][]struct {
			Shard   int  `json:"shard"`
			Primary bool `json:"primary"`
		} `json:"shards"`
	}
	if err := c.call(ctx, http.MethodGet, "/"+url.PathEscape(index)+"/_search_shards", q, nil, &r); err != nil {
		return 0, fmt.Errorf("search shards of %s: %w", index, err)
	}
	if len(r.Shards) != 1 || len(r.Shards[0]) == 0 {
		return 0, fmt.Errorf("search shards of %s/%s: %d shard groups, want 1", index, id, len(r.Shards))
	}
	return r.Shards[0][0].Shard, nil
}

// DocsPerShard returns the primary document count of each shard of index.
func (c *Conn) DocsPerShard(ctx context.Context, index string) (map[int]int64, error) {
	var rows []struct {
		Shard  string `json:"shard"`
		Prirep string `json:"prirep"`
		Docs   string `json:"docs"`
	}
	if err := c.call(ctx, http.MethodGet, "/_cat/shards/"+url.PathEscape(index), "format=json&h=shard,prirep,docs", nil, &rows); err != nil {
		return nil, fmt.Errorf("shards of %s: %w", index, err)
	}
	out := map[int]int64{}
	for _, r := range rows {
		if r.Prirep != "p" {
			continue
		}
		s, _ := strconv.Atoi(r.Shard)
		n, _ := strconv.ParseInt(r.Docs, 10, 64)
		out[s] = n
	}
	return out, nil
}
