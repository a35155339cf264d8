package search

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalelab/scalelab/engine"
	es "github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/engine/search/searchtest"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/setting"
)

var seq atomic.Int64

// open opens the scenario on the shared 1-node test cluster of name with
// its own index prefix.
func open(t *testing.T, name string, sets ...string) (*Workload, *es.Conn, error) {
	t.Helper()
	searchtest.Require(t, name)
	target, err := searchtest.Shared(name)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	set := setting.NewSet(append(e.Settings(), (&Scenario{}).Settings()...)...)
	sets = append([]string{fmt.Sprintf("%s.index_prefix=s%d-", name, seq.Add(1))}, sets...)
	for _, s := range sets {
		if err := set.Apply(s); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	conn, err := e.Open(ctx, engine.Config{Target: target, Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := conn.(*es.Conn)
	wl, err := (&Scenario{}).Open(ctx, scenario.Env{Engine: name, Conn: conn, Settings: set, Seed: 42})
	if err != nil {
		return nil, c, err
	}
	t.Cleanup(func() {
		_ = c.DeleteIndex(context.Background(), c.IndexName(indexBase, ""))
		wl.Close()
	})
	return wl.(*Workload), c, nil
}

// TestConformance loads 500 orders, runs a mixed session whose every answer
// must match the generator, then corrupts one order's category and expects
// the category query to report an integrity error.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, name := range []string{es.OpenSearch, es.Elasticsearch} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w, c, err := open(t, name, KeyOrders+"=500", KeyMix+"="+MixMixed)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			var loaded int64
			if err := w.Load(ctx, 3, func(n int64) { atomic.AddInt64(&loaded, n) }); err != nil {
				t.Fatal(err)
			}
			if loaded != 500 || w.LoadSize() != 500 {
				t.Fatalf("progress reported %d orders, LoadSize %d, want 500", loaded, w.LoadSize())
			}
			s := w.NewSession(0, 7)
			counts := make([]int, numOps)
			for k := 0; k < 200; k++ {
				op, ok := s.Next()
				if !ok {
					t.Fatal("session ended")
				}
				counts[op]++
				if err := s.Do(ctx); err != nil {
					t.Fatalf("operation %d (%s): %v", k, operationNames[op], err)
				}
			}
			for op, n := range counts {
				if n == 0 {
					t.Fatalf("mixed session never ran %s: %v", operationNames[op], counts)
				}
			}
			t.Logf("load and 200 operations: %v", time.Since(start))
			if _, err := c.GetDoc(ctx, w.index, OrderID(500), "", ""); !errors.Is(err, engine.ErrNotFound) {
				t.Fatalf("get of a missing order: %v, want not found", err)
			}

			// Corrupt order 7: move it to the next category.
			o := Generate(7)
			from := CategoryOf(7)
			o.Category = Categories[(from+1)%len(Categories)]
			if err := c.IndexDoc(ctx, w.index, OrderID(7), "", o.JSON()); err != nil {
				t.Fatal(err)
			}
			if err := c.Refresh(ctx, w.index); err != nil {
				t.Fatal(err)
			}
			if err := w.CategoryQuery(ctx, from); !errors.Is(err, engine.ErrIntegrity) {
				t.Fatalf("category query after corruption: %v, want integrity error", err)
			}
			if err := w.GetOrder(ctx, 7); !errors.Is(err, engine.ErrIntegrity) {
				t.Fatalf("get of the corrupted order: %v, want integrity error", err)
			}
			if err := w.MatchAll(ctx); err != nil {
				t.Fatalf("match_all still counts every order: %v", err)
			}
		})
	}
}

// TestUserRoutingRefused: the scenario has no user id to route by.
func TestUserRoutingRefused(t *testing.T) {
	t.Parallel()
	for _, set := range []string{"opensearch.routing=user", "opensearch.index_layout=per_user"} {
		if _, _, err := open(t, es.OpenSearch, set); err == nil {
			t.Fatalf("%s: Open succeeded, want an error", set)
		}
	}
}

// TestGenerate: orders are deterministic, depend on the order number only,
// spread over every category, and have consistent positive prices.
func TestGenerate(t *testing.T) {
	t.Parallel()
	a, b := Generate(42), Generate(42)
	if !reflect.DeepEqual(a, b) || string(a.JSON()) != string(b.JSON()) {
		t.Fatal("Generate is not deterministic")
	}
	if reflect.DeepEqual(Generate(1), Generate(2)) {
		t.Fatal("orders 1 and 2 are equal")
	}
	counts := make([]int, len(Categories))
	end := Epoch.AddDate(1, 0, 0).UnixMilli()
	for i := int64(0); i < 4675; i++ {
		o := Generate(i)
		cat := CategoryOf(i)
		counts[cat]++
		if o.Category != Categories[cat] || o.OrderID != OrderID(i) || o.Currency != "EUR" {
			t.Fatalf("order %d: %+v, category want %q", i, o, Categories[cat])
		}
		if o.OrderDate < Epoch.UnixMilli() || o.OrderDate >= end {
			t.Fatalf("order %d: date %d outside 2025", i, o.OrderDate)
		}
		if len(o.Products) < 1 || len(o.Products) > 4 {
			t.Fatalf("order %d: %d products", i, len(o.Products))
		}
		sum := 0.0
		for _, p := range o.Products {
			if p.BasePrice <= 0 || p.Quantity < 1 || p.ProductName == "" {
				t.Fatalf("order %d: product %+v", i, p)
			}
			sum += p.BasePrice * float64(p.Quantity)
		}
		if o.TaxfulTotalPrice <= 0 || o.TaxfulTotalPrice != cents(sum) {
			t.Fatalf("order %d: total %v, products sum to %v", i, o.TaxfulTotalPrice, sum)
		}
		if o.Customer.FirstName == "" || o.Customer.City == "" || o.Geo.Lat == 0 {
			t.Fatalf("order %d: customer %+v geo %+v", i, o.Customer, o.Geo)
		}
	}
	for c, n := range counts {
		if n < 4675/len(Categories)/2 {
			t.Fatalf("category %q has %d of 4675 orders: %v", Categories[c], n, counts)
		}
	}
}

// TestSettingsAndSessions (no server): the registry has the scenario, the
// default mix is match_all only, and sessions never end.
func TestSettingsAndSessions(t *testing.T) {
	t.Parallel()
	s, err := scenario.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if !scenario.Supports(s, es.Elasticsearch) || !scenario.Supports(s, es.OpenSearch) {
		t.Fatalf("engines %v", s.Engines())
	}
	set := setting.NewSet(s.Settings()...)
	if set.Get(KeyOrders).Int() != 4675 || set.Get(KeyMix).String() != MixMatchAll {
		t.Fatal("defaults differ from the study")
	}
	w := &Workload{orders: 10}
	sess := w.NewSession(0, 1)
	for k := 0; k < 100; k++ {
		if op, ok := sess.Next(); !ok || op != OpMatchAll {
			t.Fatalf("match_all mix: op %d ok %v", op, ok)
		}
	}
}
