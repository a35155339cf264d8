package logs

import (
	"github.com/scalelab/scalelab/scenario/kit"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/scenario"
)

func init() {
	openers[search.OpenSearch] = openSearch
	openers[search.Elasticsearch] = openSearch
}

// searchIndex is the index of the log records on the search engines.
const searchIndex = "logs"

// searchMappings: every field indexed (the study's Elasticsearch setup),
// the message split on whitespace so that a search matches whole words
// between spaces, as on the SQL engines.
var searchMappings = json.RawMessage(`{"dynamic":"strict","properties":{` +
	`"id":{"type":"long"},"ts":{"type":"long"},"machine":{"type":"keyword"},"service":{"type":"keyword"},` +
	`"severity":{"type":"integer"},"message":{"type":"text","analyzer":"whitespace"}}}`)

// searchStore keeps each record as a document whose _id is the record id.
// Reads by id are real time (every acknowledged write); counts, searches
// and aggregations see what the last refresh made visible, so they answer
// as of "the primary" (every acknowledged write) only when every write
// waits for or forces a refresh (<engine>.refresh=wait_for or true). The
// freshness probe measures that delay. logs.indexes does not apply: a
// search engine indexes every field.
type searchStore struct {
	c     *search.Conn
	index string
	// primary reports whether searches see every acknowledged write.
	primary bool
	// loaded is set by finishLoad: bulk writes before it are the load,
	// which refreshes once at its end instead of per request.
	loaded atomic.Bool
}

func openSearch(ctx context.Context, env scenario.Env, recreate bool) (store, error) {
	c, err := kit.AsConn[*search.Conn](env)
	if err != nil {
		return nil, err
	}
	o := c.Options()
	if o.Routing != search.RoutingNone || o.Layout != search.LayoutShared {
		return nil, fmt.Errorf("%s.routing=%s and %s.index_layout=%s: log records have no user id; use routing=none and index_layout=shared",
			env.Engine, o.Routing, env.Engine, o.Layout)
	}
	s := &searchStore{c: c, index: c.IndexName(searchIndex, ""), primary: c.RefreshParam() != ""}
	create := c.EnsureIndex
	if recreate {
		create = c.CreateIndex
	}
	if err := create(ctx, s.index, searchMappings, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// appendDoc appends the JSON document of r.
func appendDoc(b []byte, r *Record) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, r.Timestamp, 10)
	b = append(b, `,"machine":`...)
	b = search.AppendJSONString(b, r.Machine)
	b = append(b, `,"service":`...)
	b = search.AppendJSONString(b, r.Service)
	b = append(b, `,"severity":`...)
	b = strconv.AppendInt(b, int64(r.Severity), 10)
	b = append(b, `,"message":`...)
	b = search.AppendJSONString(b, r.Message)
	return append(b, '}')
}

func (s *searchStore) insert(ctx context.Context, r *Record) error {
	return s.c.IndexDoc(ctx, s.index, strconv.FormatInt(r.ID, 10), "", appendDoc(make([]byte, 0, 400), r))
}

// insertBatch writes rs in _bulk requests of the engine's bulk size, with
// the engine's refresh policy (the load refreshes once, in finishLoad).
func (s *searchStore) insertBatch(ctx context.Context, rs []Record) error {
	var b search.BulkBuilder
	var doc []byte
	size := s.c.Options().BulkSize
	for i := range rs {
		doc = appendDoc(doc[:0], &rs[i])
		b.Index(s.index, strconv.FormatInt(rs[i].ID, 10), "", doc)
		if b.Len() >= size || i == len(rs)-1 {
			if err := s.c.Bulk(ctx, &b, !s.loaded.Load()); err != nil {
				return err
			}
			b.Reset()
		}
	}
	return nil
}

// finishLoad refreshes the index (force-merging it with
// <engine>.force_merge) so that counts see every loaded record.
func (s *searchStore) finishLoad(ctx context.Context, _ bool) error {
	defer s.loaded.Store(true)
	return s.c.AfterLoad(ctx, s.index)
}

func (s *searchStore) existing(ctx context.Context) (int64, int64, error) {
	if err := s.c.Refresh(ctx, s.index); err != nil {
		return 0, 0, err
	}
	r, err := s.c.Search(ctx, s.index, []byte(`{"size":0,"track_total_hits":true,"query":{"range":{"id":{"gte":0}}},"aggs":{"max_id":{"max":{"field":"id"}}}}`), "")
	if err != nil {
		return 0, 0, fmt.Errorf("existing records: %w", err)
	}
	var aggs struct {
		MaxID struct {
			Value *float64 `json:"value"`
		} `json:"max_id"`
	}
	if err := json.Unmarshal(r.Aggregations, &aggs); err != nil {
		return 0, 0, fmt.Errorf("existing records: decode: %w", err)
	}
	next := int64(0)
	if aggs.MaxID.Value != nil {
		next = int64(*aggs.MaxID.Value) + 1
	}
	return r.Hits.Total.Value, next, nil
}

func (s *searchStore) deleteFresh(ctx context.Context) error {
	body := []byte(`{"query":{"range":{"id":{"lt":0}}}}`)
	if err := s.c.Refresh(ctx, s.index); err != nil {
		return err
	}
	status, data, err := s.c.Do(ctx, "POST", "/"+s.index+"/_delete_by_query", "refresh=true&conflicts=proceed", body)
	if err != nil {
		return fmt.Errorf("delete freshness records: %w", err)
	}
	if status >= 300 {
		return fmt.Errorf("delete freshness records: HTTP %d: %.200s", status, data)
	}
	return nil
}

func (s *searchStore) newView() view { return s }

func (s *searchStore) wrote() {}

// source is a record document as stored.
type source struct {
	ID       int64  `json:"id"`
	TS       int64  `json:"ts"`
	Machine  string `json:"machine"`
	Service  string `json:"service"`
	Severity int    `json:"severity"`
	Message  string `json:"message"`
}

// read gets the document by id: real time, so it has every acknowledged
// write (primary).
func (s *searchStore) read(ctx context.Context, id int64, r *Record) (bool, bool, error) {
	src, err := s.c.GetDoc(ctx, s.index, strconv.FormatInt(id, 10), "", "")
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return false, true, nil
		}
		return false, true, err
	}
	var d source
	if err := json.Unmarshal(src, &d); err != nil {
		return false, true, fmt.Errorf("record %d: decode: %w", id, err)
	}
	*r = Record{ID: id, Timestamp: d.TS, Machine: d.Machine, Service: d.Service, Severity: d.Severity, Message: d.Message}
	return true, true, nil
}

func (s *searchStore) count(ctx context.Context, query string) (int64, bool, error) {
	n, err := s.c.Count(ctx, s.index, []byte(query), "")
	return n, s.primary, err
}

func (s *searchStore) countA(ctx context.Context, ts int64) (int64, bool, error) {
	return s.count(ctx, fmt.Sprintf(`{"term":{"ts":%d}}`, ts))
}

func (s *searchStore) countB(ctx context.Context, ts int64, machine string) (int64, bool, error) {
	return s.count(ctx, fmt.Sprintf(`{"bool":{"filter":[{"term":{"ts":%d}},{"term":{"machine":%s}}]}}`, ts, search.AppendJSONString(nil, machine)))
}

func (s *searchStore) countC(ctx context.Context, ts int64, service string, severity int) (int64, bool, error) {
	return s.count(ctx, fmt.Sprintf(`{"bool":{"filter":[{"term":{"ts":%d}},{"term":{"service":%s}},{"term":{"severity":%d}}]}}`,
		ts, search.AppendJSONString(nil, service), severity))
}

func (s *searchStore) search(ctx context.Context, word string) (int64, bool, error) {
	return s.count(ctx, fmt.Sprintf(`{"match":{"message":%s}}`, search.AppendJSONString(nil, word)))
}

func (s *searchStore) countVisible(ctx context.Context, ts int64) (int64, error) {
	n, _, err := s.countA(ctx, ts)
	return n, err
}

// errorsPerHost is a terms aggregation on machine over a filter.
func (s *searchStore) errorsPerHost(ctx context.Context, from, to int64, maxSeverity int, out map[string]int64) (bool, error) {
	body := fmt.Sprintf(`{"size":0,"query":{"bool":{"filter":[{"range":{"ts":{"gte":%d,"lte":%d}}},{"range":{"severity":{"lte":%d}}}]}},`+
		`"aggs":{"hosts":{"terms":{"field":"machine","size":%d}}}}`, from, to, maxSeverity, 4*NumMachines)
	r, err := s.c.Search(ctx, s.index, []byte(body), "")
	if err != nil {
		return s.primary, err
	}
	var aggs struct {
		Hosts struct {
			Buckets []struct {
				Key      string `json:"key"`
				DocCount int64  `json:"doc_count"`
			} `json:"buckets"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal(r.Aggregations, &aggs); err != nil {
		return s.primary, fmt.Errorf("errors per host: decode: %w", err)
	}
	for _, b := range aggs.Hosts.Buckets {
		out[b.Key] = b.DocCount
	}
	return s.primary, nil
}

func (s *searchStore) close() error { return nil }
