// Package search is the "search" scenario: e-commerce orders in a search
// cluster under load, the third study in docs/studies.md. The sample orders (4,675 documents by
// default: customer, products, category, prices, date, geo point) sit in
// one index, and every user POSTs a match_all search to the cluster, as the
// study's JMeter threads did. search.mix=mixed adds a term query on the
// category and reads by id. Every answer is checked against the generator,
// which depends on the order number only: the number of hits of match_all
// and of each category is known in advance.
//
// The scenario runs on the search engines only (opensearch and
// elasticsearch); it has no user id, so <engine>.routing=user and
// <engine>.index_layout=per_user are refused.
package search

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	"github.com/scalelab/scalelab/engine"
	es "github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

// Name is the scenario's registry name.
const Name = "search"

// Operation indexes, in the order Workload.Operations returns their names.
const (
	OpMatchAll = iota
	OpCategory
	OpGet
	numOps
)

var operationNames = []string{"search.match_all", "search.category", "orders.get"}

// Setting keys.
const (
	KeyOrders = "search.orders"
	KeyMix    = "search.mix"
	KeySize   = "search.size"
	KeyLoad   = "search.load"
)

// Mixes.
const (
	MixMatchAll = "match_all"
	MixMixed    = "mixed"
)

// indexBase is the index holding the orders (after the engine's prefix).
const indexBase = "ecommerce"

// bulkDocs is the number of orders per _bulk request of the load.
const bulkDocs = 500

// mappings: the fields the queries use are indexed; _source keeps every
// field of the order.
var mappings = json.RawMessage(`{"dynamic":false,"properties":{` +
	`"order_id":{"type":"keyword"},` +
	`"order_date":{"type":"date","format":"epoch_millis"},` +
	`"customer":{"properties":{"id":{"type":"keyword"},"first_name":{"type":"keyword"},"last_name":{"type":"keyword"},"gender":{"type":"keyword"},"city":{"type":"keyword"},"country":{"type":"keyword"}}},` +
	`"geo":{"type":"geo_point"},` +
	`"category":{"type":"keyword"},` +
	`"products":{"properties":{"product_name":{"type":"text"},"base_price":{"type":"double"},"quantity":{"type":"integer"}}},` +
	`"taxful_total_price":{"type":"double"},` +
	`"currency":{"type":"keyword"}}}`)

func init() { scenario.Register(&Scenario{}) }

// Scenario is the search scenario.
type Scenario struct{}

var _ scenario.Scenario = (*Scenario)(nil)

// Name returns "search".
func (*Scenario) Name() string { return Name }

// Operations names the operations its workloads run (scenario.Operator).
func (*Scenario) Operations() []string { return append([]string(nil), operationNames...) }

// Description is one line for `scalelab list`.
func (*Scenario) Description() string {
	return "search cluster under load: e-commerce orders in one index, match_all searches (optionally category queries and reads by id), hit counts checked"
}

// Settings declares the scenario's settings.
func (*Scenario) Settings() []setting.Spec {
	return []setting.Spec{
		{Key: KeyOrders, Kind: setting.Int, Default: "4675", Min: 1, Max: 10_000_000, Description: "orders (documents) in the index (the study's sample: 4,675)"},
		{Key: KeyMix, Kind: setting.Enum, Default: MixMatchAll, Allowed: []string{MixMatchAll, MixMixed},
			Description: "match_all: every operation a match_all search (the study); mixed: match_all 0.5, category term query 0.3, read by id 0.2"},
		{Key: KeySize, Kind: setting.Int, Default: "10", Min: 1, Max: 10000, Description: "hits returned per search"},
		{Key: KeyLoad, Kind: setting.Bool, Default: "true", Description: "recreate the index and load the orders before the run"},
	}
}

// Engines lists the engines the scenario runs on.
func (*Scenario) Engines() []string { return []string{es.Elasticsearch, es.OpenSearch} }

// Open checks the engine's options, (re)creates the index when search.load
// is true, and precomputes the ground truth: the orders per category.
func (s *Scenario) Open(ctx context.Context, env scenario.Env) (scenario.Workload, error) {
	if !scenario.Supports(s, env.Engine) {
		return nil, fmt.Errorf("search on %q: %w (search supports %v)", env.Engine, scenario.ErrEngineNotSupported, s.Engines())
	}
	c, ok := env.Conn.(*es.Conn)
	if !ok {
		return nil, fmt.Errorf("search on %s: connection is %T, want *search.Conn", env.Engine, env.Conn)
	}
	o := c.Options()
	if o.Routing != es.RoutingNone || o.Layout != es.LayoutShared {
		return nil, fmt.Errorf("search on %s: %s.routing=%s and %s.index_layout=%s: the search scenario has no user id; use routing=none and index_layout=shared",
			env.Engine, env.Engine, o.Routing, env.Engine, o.Layout)
	}
	set := env.Settings
	w := &Workload{
		c:      c,
		index:  c.IndexName(indexBase, ""),
		orders: set.Get(KeyOrders).Int(),
		mixed:  set.Get(KeyMix).String() == MixMixed,
		size:   int(set.Get(KeySize).Int()),
		load:   set.Get(KeyLoad).Bool(),
		counts: make([]int64, len(Categories)),
	}
	for i := int64(0); i < w.orders; i++ {
		w.counts[CategoryOf(i)]++
	}
	w.matchAll = []byte(fmt.Sprintf(`{"query":{"match_all":{}},"size":%d,"track_total_hits":true}`, w.size))
	for _, cat := range Categories {
		w.byCategory = append(w.byCategory, []byte(fmt.Sprintf(`{"query":{"term":{"category":%s}},"size":%d,"track_total_hits":true}`,
			es.AppendJSONString(nil, cat), w.size)))
	}
	create := c.EnsureIndex
	if w.load {
		create = c.CreateIndex
	}
	if err := create(ctx, w.index, mappings, nil); err != nil {
		return nil, fmt.Errorf("search on %s: %w", env.Engine, err)
	}
	return w, nil
}

// Workload is an opened search workload.
type Workload struct {
	c      *es.Conn
	index  string
	orders int64
	mixed  bool
	size   int
	load   bool
	counts []int64 // orders per category (ground truth)

	matchAll   []byte   // the match_all request
	byCategory [][]byte // the term query of each category
}

var (
	_ scenario.Workload = (*Workload)(nil)
	_ scenario.Reporter = (*Workload)(nil)
)

// Operations names the operations.
func (w *Workload) Operations() []string { return append([]string(nil), operationNames...) }

// LoadSize is the number of orders Load writes.
func (w *Workload) LoadSize() int64 {
	if !w.load {
		return 0
	}
	return w.orders
}

// Load writes the orders in _bulk requests of 500 from `workers`
// goroutines, then refreshes the index (and force-merges it with
// <engine>.force_merge).
func (w *Workload) Load(ctx context.Context, workers int, progress func(n int64)) error {
	n := w.LoadSize()
	if n == 0 {
		return nil
	}
	workers = max(1, min(workers, int((n+bulkDocs-1)/bulkDocs)))
	var next atomic.Int64
	errs := make(chan error, workers)
	for k := 0; k < workers; k++ {
		go func() {
			var b es.BulkBuilder
			for {
				lo := next.Add(bulkDocs) - bulkDocs
				if lo >= n {
					errs <- nil
					return
				}
				hi := min(lo+bulkDocs, n)
				b.Reset()
				for i := lo; i < hi; i++ {
					b.Index(w.index, OrderID(i), "", Generate(i).JSON())
				}
				if err := w.c.Bulk(ctx, &b, true); err != nil {
					errs <- fmt.Errorf("load orders %d-%d: %w", lo, hi-1, err)
					return
				}
				progress(hi - lo)
			}
		}()
	}
	var first error
	for k := 0; k < workers; k++ {
		if err := <-errs; err != nil && first == nil {
			first = err
			next.Store(n) // stop the others
		}
	}
	if first != nil {
		return first
	}
	return w.c.AfterLoad(ctx, w.index)
}

// NewSession returns a session; its choices derive from seed.
func (w *Workload) NewSession(_ uint64, seed uint64) scenario.Session {
	return &Session{w: w, rng: rand.New(rand.NewPCG(seed, 0x5ea4c5))}
}

// Close releases nothing: the connection is the runner's.
func (w *Workload) Close() error { return nil }

// Report gives the ground truth the searches were checked against.
func (w *Workload) Report() map[string]any {
	counts := make(map[string]int64, len(Categories))
	for i, c := range w.counts {
		counts[Categories[i]] = c
	}
	return map[string]any{"orders": w.orders, "category_counts": counts}
}

// MatchAll runs the match_all search; its total hits must be every order.
func (w *Workload) MatchAll(ctx context.Context) error {
	r, err := w.c.Search(ctx, w.index, w.matchAll, "")
	if err != nil {
		return err
	}
	if got := r.Hits.Total.Value; got != w.orders || r.Hits.Total.Relation != "eq" {
		return fmt.Errorf("%w: match_all found %d (%s) orders, want %d", engine.ErrIntegrity, got, r.Hits.Total.Relation, w.orders)
	}
	if want := min(int64(w.size), w.orders); int64(len(r.Hits.Hits)) != want {
		return fmt.Errorf("%w: match_all returned %d hits, want %d", engine.ErrIntegrity, len(r.Hits.Hits), want)
	}
	return nil
}

// CategoryQuery runs the term query on category cat; its total hits must
// be the generated number of orders of that category.
func (w *Workload) CategoryQuery(ctx context.Context, cat int) error {
	r, err := w.c.Search(ctx, w.index, w.byCategory[cat], "")
	if err != nil {
		return err
	}
	if got, want := r.Hits.Total.Value, w.counts[cat]; got != want || r.Hits.Total.Relation != "eq" {
		return fmt.Errorf("%w: category %q found %d (%s) orders, want %d", engine.ErrIntegrity, Categories[cat], got, r.Hits.Total.Relation, want)
	}
	return nil
}

// GetOrder reads order i by id and checks its id and category.
func (w *Workload) GetOrder(ctx context.Context, i int64) error {
	src, err := w.c.GetDoc(ctx, w.index, OrderID(i), "", "order_id,category")
	if err != nil {
		return err
	}
	var d struct {
		OrderID  string `json:"order_id"`
		Category string `json:"category"`
	}
	if err := json.Unmarshal(src, &d); err != nil {
		return fmt.Errorf("%w: order %d: decode: %v", engine.ErrIntegrity, i, err)
	}
	if want := Categories[CategoryOf(i)]; d.OrderID != OrderID(i) || d.Category != want {
		return fmt.Errorf("%w: order %d read as order_id %q category %q, want %q", engine.ErrIntegrity, i, d.OrderID, d.Category, want)
	}
	return nil
}

// Session is one user: an endless sequence of operations drawn from the
// mix.
type Session struct {
	w   *Workload
	rng *rand.Rand
	op  int
	cat int
	id  int64
}

var _ scenario.Session = (*Session)(nil)

// Next chooses the next operation and its argument; sessions never end.
func (s *Session) Next() (int, bool) {
	s.op = OpMatchAll
	if s.w.mixed {
		switch p := s.rng.Float64(); {
		case p < 0.5:
			s.op = OpMatchAll
		case p < 0.8:
			s.op = OpCategory
			s.cat = s.rng.IntN(len(Categories))
		default:
			s.op = OpGet
			s.id = s.rng.Int64N(s.w.orders)
		}
	}
	return s.op, true
}

// Do runs the prepared operation.
func (s *Session) Do(ctx context.Context) error {
	switch s.op {
	case OpCategory:
		return s.w.CategoryQuery(ctx, s.cat)
	case OpGet:
		return s.w.GetOrder(ctx, s.id)
	default:
		return s.w.MatchAll(ctx)
	}
}

// OperationNames lists the scenario's operations, as run.json and
// experiment.json name them.
func OperationNames() []string { return append([]string(nil), operationNames[:]...) }
