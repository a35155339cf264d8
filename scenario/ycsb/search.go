package ycsb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/scenario"
)

func init() {
	openers[search.OpenSearch] = openSearch
	openers[search.Elasticsearch] = openSearch
}

// searchIndex is the index holding the records (YCSB's table name).
const searchIndex = "usertable"

// searchMappings indexes only the key (a keyword, for scans in key order);
// the fields stay in _source, unindexed, as YCSB's Elasticsearch binding
// needs nothing else.
var searchMappings = json.RawMessage(`{"dynamic":false,"properties":{"key":{"type":"keyword"}}}`)

// searchStore keeps each record as a document {"key": ..., "field0": ...}
// whose id is the key. Reads by id are real time; scans are searches, so
// they see writes after the next refresh (the engine's refresh setting).
type searchStore struct {
	c       *search.Conn
	index   string
	names   []string
	records uint64
	loaded  atomic.Uint64 // records written by insertBatch, to refresh (and merge) once the load is done
}

func openSearch(ctx context.Context, env scenario.Env, cfg *config) (store, error) {
	c, err := asConn[*search.Conn](env)
	if err != nil {
		return nil, err
	}
	o := c.Options()
	if o.Routing != search.RoutingNone || o.Layout != search.LayoutShared {
		return nil, errEngine(env.Engine, fmt.Errorf("%s.routing=%s and %s.index_layout=%s: ycsb has no user id (scans span every key); use routing=none and index_layout=shared",
			env.Engine, o.Routing, env.Engine, o.Layout))
	}
	s := &searchStore{c: c, index: c.IndexName(searchIndex, ""), names: fieldNames(cfg.fields), records: cfg.records}
	create := c.EnsureIndex
	if cfg.load {
		create = c.CreateIndex
	}
	if err := create(ctx, s.index, searchMappings, nil); err != nil {
		return nil, errEngine(env.Engine, err)
	}
	return s, nil
}

// doc encodes the fields of vals (one field when field >= 0; with key
// when key is not nil) as a JSON object.
func (s *searchStore) doc(dst, key []byte, field int, vals [][]byte) []byte {
	dst = append(dst, '{')
	if key != nil {
		dst = append(dst, `"key":`...)
		dst = search.AppendJSONString(dst, key)
	}
	for f, v := range vals {
		if field >= 0 && f != field {
			continue
		}
		if len(dst) > 1 {
			dst = append(dst, ',')
		}
		dst = search.AppendJSONString(dst, s.names[f])
		dst = append(dst, ':')
		dst = search.AppendJSONString(dst, v)
	}
	return append(dst, '}')
}

// copySource copies the fields of a document's _source into row i of res.
func (s *searchStore) copySource(src json.RawMessage, field int, res *result, i int) error {
	var m map[string]string
	if err := json.Unmarshal(src, &m); err != nil {
		return fmt.Errorf("decode document: %w", err)
	}
	for f, name := range s.names {
		if field >= 0 && f != field {
			continue
		}
		if v, ok := m[name]; ok {
			res.set(i, f, []byte(v))
		}
	}
	return nil
}

func (s *searchStore) includes(field int) string {
	if field >= 0 {
		return s.names[field]
	}
	return ""
}

func (s *searchStore) read(ctx context.Context, key []byte, field int, res *result) error {
	src, err := s.c.GetDoc(ctx, s.index, string(key), "", s.includes(field))
	if err != nil {
		return err
	}
	return s.copySource(src, field, res, res.addRow(key))
}

func (s *searchStore) scan(ctx context.Context, start []byte, n, field int, res *result) error {
	src := `true`
	if field >= 0 {
		src = `["key",` + string(search.AppendJSONString(nil, s.names[field])) + `]`
	}
	body := fmt.Sprintf(`{"size":%d,"query":{"range":{"key":{"gte":%s}}},"sort":[{"key":"asc"}],"_source":%s}`,
		n, search.AppendJSONString(nil, start), src)
	r, err := s.c.Search(ctx, s.index, []byte(body), "")
	if err != nil {
		return err
	}
	for _, h := range r.Hits.Hits {
		if err := s.copySource(h.Source, field, res, res.addRowString(h.ID)); err != nil {
			return err
		}
	}
	return nil
}

func (s *searchStore) update(ctx context.Context, key []byte, field int, vals [][]byte) error {
	return s.c.UpdateDoc(ctx, s.index, string(key), "", s.doc(nil, nil, field, vals))
}

func (s *searchStore) insert(ctx context.Context, key []byte, vals [][]byte) error {
	return s.c.IndexDoc(ctx, s.index, string(key), "", s.doc(nil, key, -1, vals))
}

// insertBatch writes b in _bulk requests of the engine's bulk size. The
// batch that completes the load refreshes the index (and force-merges it
// with <engine>.force_merge), so scans see every loaded record whatever
// the refresh setting.
func (s *searchStore) insertBatch(ctx context.Context, b *batch) error {
	var bb search.BulkBuilder
	var doc []byte
	size := s.c.Options().BulkSize
	var key strings.Builder
	for i := 0; i < b.n; i++ {
		doc = s.doc(doc[:0], b.keys[i], -1, b.row(i))
		key.Reset()
		key.Write(b.keys[i])
		bb.Index(s.index, key.String(), "", doc)
		if bb.Len() >= size || i == b.n-1 {
			if err := s.c.Bulk(ctx, &bb, true); err != nil {
				return err
			}
			bb.Reset()
		}
	}
	if s.loaded.Add(uint64(b.n)) == s.records {
		return s.c.AfterLoad(ctx, s.index)
	}
	return nil
}

func (s *searchStore) close() error { return nil }
