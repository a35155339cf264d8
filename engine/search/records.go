package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/metrics"
)

var _ engine.Records = (*Conn)(nil)

// recordMappings index only the key (a keyword, for scans in key order);
// the fields stay in _source, unindexed.
var recordMappings = json.RawMessage(`{"dynamic":false,"properties":{"key":{"type":"keyword"}}}`)

// collection keeps each record as a document {"key": ..., FIELD: ...}
// whose id is the key, in one index. Reads by id are real time; scans and
// counts are searches, so they see writes after the next refresh (the
// engine's refresh setting; Count and MaxKey refresh first).
type collection struct {
	c       *Conn
	index   string
	names   []string
	records int64
	loaded  atomic.Int64 // records written by InsertBatch, to refresh (and merge) once the load is done
}

// Collection creates the index of spec (recreating it with spec.Recreate).
// Records span one index, so <engine>.routing must be none and
// <engine>.index_layout shared.
func (c *Conn) Collection(ctx context.Context, spec engine.CollectionSpec) (engine.Collection, error) {
	o := c.opts
	if o.Routing != RoutingNone || o.Layout != LayoutShared {
		return nil, fmt.Errorf("%w: %s.routing=%s and %s.index_layout=%s: the %s collection is one index and scans span every key; use routing=none and index_layout=shared",
			engine.ErrConfig, c.engine, o.Routing, c.engine, o.Layout, spec.Name)
	}
	s := &collection{c: c, index: c.IndexName(spec.Name, ""), names: spec.Fields, records: spec.Records}
	create := c.EnsureIndex
	if spec.Recreate {
		create = c.CreateIndex
	}
	if err := create(ctx, s.index, recordMappings, nil); err != nil {
		return nil, fmt.Errorf("%s collection %s: %w", c.engine, spec.Name, err)
	}
	return s, nil
}

// doc encodes the fields of vals (those of fields, every one when nil;
// with key when key is not nil) as a JSON object.
func (s *collection) doc(dst, key []byte, fields []int, vals [][]byte) []byte {
	dst = append(dst, '{')
	if key != nil {
		dst = append(dst, `"key":`...)
		dst = AppendJSONString(dst, key)
	}
	add := func(f int) {
		if len(dst) > 1 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, s.names[f])
		dst = append(dst, ':')
		dst = AppendJSONString(dst, vals[f])
	}
	if fields == nil {
		for f := range vals {
			add(f)
		}
	} else {
		for _, f := range fields {
			add(f)
		}
	}
	return append(dst, '}')
}

// copySource copies the fields of a document's _source into row i.
func (s *collection) copySource(src json.RawMessage, field int, rows *engine.Rows, i int) error {
	var m map[string]string
	if err := json.Unmarshal(src, &m); err != nil {
		return fmt.Errorf("decode document: %w", err)
	}
	for f, name := range s.names {
		if field >= 0 && f != field {
			continue
		}
		if v, ok := m[name]; ok {
			rows.SetString(i, f, v)
		}
	}
	return nil
}

func (s *collection) includes(field int) string {
	if field >= 0 {
		return s.names[field]
	}
	return ""
}

func (s *collection) Get(ctx context.Context, key []byte, field int, rows *engine.Rows) error {
	src, err := s.c.GetDoc(ctx, s.index, string(key), "", s.includes(field))
	if err != nil {
		return err
	}
	return s.copySource(src, field, rows, rows.Add(key))
}

func (s *collection) Scan(ctx context.Context, start []byte, n, field int, rows *engine.Rows) error {
	src := `true`
	if field >= 0 {
		src = `["key",` + string(AppendJSONString(nil, s.names[field])) + `]`
	}
	body := fmt.Sprintf(`{"size":%d,"query":{"range":{"key":{"gte":%s}}},"sort":[{"key":"asc"}],"_source":%s}`,
		n, AppendJSONString(nil, start), src)
	r, err := s.c.Search(ctx, s.index, []byte(body), "")
	if err != nil {
		return err
	}
	for _, h := range r.Hits.Hits {
		if err := s.copySource(h.Source, field, rows, rows.AddString(h.ID)); err != nil {
			return err
		}
	}
	return nil
}

func (s *collection) Update(ctx context.Context, key []byte, fields []int, vals [][]byte) error {
	return s.c.UpdateDoc(ctx, s.index, string(key), "", s.doc(nil, nil, fields, vals))
}

// Insert creates the document, failing (HTTP 409) if the key exists.
func (s *collection) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	return s.c.CreateDoc(ctx, s.index, string(key), "", s.doc(nil, key, nil, vals))
}

func (s *collection) Delete(ctx context.Context, key []byte) error {
	path := docPath(s.index, string(key), "_doc")
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
		return newHTTPError(http.MethodDelete, path, status, body)
	}
	return nil
}

// InsertBatch writes b in _bulk requests of the engine's bulk size. The
// batch that completes the load (spec.Records) refreshes the index (and
// force-merges it with <engine>.force_merge).
func (s *collection) InsertBatch(ctx context.Context, b *engine.Batch) error {
	var bb BulkBuilder
	var doc []byte
	size := s.c.opts.BulkSize
	var key strings.Builder
	for i := 0; i < b.N; i++ {
		doc = s.doc(doc[:0], b.Keys[i], nil, b.Row(i))
		key.Reset()
		key.Write(b.Keys[i])
		bb.Index(s.index, key.String(), "", doc)
		if bb.Len() >= size || i == b.N-1 {
			if err := s.c.Bulk(ctx, &bb, true); err != nil {
				return err
			}
			bb.Reset()
		}
	}
	if s.loaded.Add(int64(b.N)) == s.records {
		return s.c.AfterLoad(ctx, s.index)
	}
	return nil
}

// AfterLoad refreshes the index (and force-merges it with
// <engine>.force_merge), so scans see every loaded record.
func (s *collection) AfterLoad(ctx context.Context) error { return s.c.AfterLoad(ctx, s.index) }

// Count refreshes the index, then counts its documents.
func (s *collection) Count(ctx context.Context) (int64, error) {
	if err := s.c.Refresh(ctx, s.index); err != nil {
		return 0, err
	}
	return s.c.Count(ctx, s.index, nil, "")
}

// MaxKey refreshes the index, then searches for the highest key.
func (s *collection) MaxKey(ctx context.Context) ([]byte, error) {
	if err := s.c.Refresh(ctx, s.index); err != nil {
		return nil, err
	}
	r, err := s.c.Search(ctx, s.index, []byte(`{"size":1,"_source":false,"sort":[{"key":"desc"}]}`), "")
	if err != nil || len(r.Hits.Hits) == 0 {
		return nil, err
	}
	return []byte(r.Hits.Hits[0].ID), nil
}

// ReadBack reads the keys with one real-time _mget, which sees every
// acknowledged write, refreshed or not.
func (s *collection) ReadBack(ctx context.Context, keys [][]byte, field int, rows *engine.Rows) error {
	if len(keys) == 0 {
		return nil
	}
	body, err := json.Marshal(map[string][]string{"ids": engine.Strings(keys)})
	if err != nil {
		return fmt.Errorf("read back: encode _mget: %w", err)
	}
	query := "realtime=true"
	if field >= 0 {
		query += "&_source_includes=" + url.QueryEscape(s.names[field])
	}
	path := "/" + url.PathEscape(s.index) + "/_mget"
	status, data, err := s.c.DoRead(ctx, http.MethodPost, path, query, body)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if status >= 300 {
		return newHTTPError(http.MethodPost, path, status, data)
	}
	var resp mgetResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return fmt.Errorf("read back: decode _mget response: %w", err)
	}
	for _, d := range resp.Docs {
		if d.Error != nil {
			return metrics.WithClass(metrics.Other, fmt.Errorf("read back %s/%s: %s: %s", s.index, d.ID, d.Error.Type, d.Error.Reason))
		}
		if d.Found {
			if err := s.copySource(d.Source, field, rows, rows.AddString(d.ID)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Traits: reads by id are real time, scans in key order but lagging until
// a refresh, a missing key is told.
func (s *collection) Traits() engine.Traits {
	return engine.Traits{ReadsOwnWrites: true, KeyOrderedScans: true, TellsMissing: true, ScansLag: true}
}

func (s *collection) Close() error { return nil }

// HasRecords reports true: the engine's connections implement
// engine.Records.
func (*Engine) HasRecords() bool { return true }

// mgetResponse is the answer of _mget: per document asked for, in order,
// whether it was found, its source when asked for, or its error.
type mgetResponse struct {
	Docs []struct {
		ID     string          `json:"_id"`
		Found  bool            `json:"found"`
		Source json.RawMessage `json:"_source"`
		Error  *struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		} `json:"error"`
	} `json:"docs"`
}
