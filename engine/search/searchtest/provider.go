package searchtest

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/search"
	"github.com/scalelab/scalelab/setting"
)

// The search providers: an index prefix of its own per store, on the
// distribution's shared 1-node test cluster; its indices are deleted when
// the test ends.
func init() {
	for _, name := range []string{search.OpenSearch, search.Elasticsearch} {
		enginetest.Register(enginetest.Provider{
			Engine: name,
			Open: func(t testing.TB, set *setting.Set) engine.Conn {
				if err := search.Installed(name); err != nil {
					enginetest.Unavailable(t, name, err, "make java")
				}
				target, err := Shared(name)
				if err != nil {
					enginetest.Unavailable(t, name, err, "make java")
				}
				prefix := enginetest.Name() + "_"
				if err := set.Apply(name + "." + search.SetIndexPrefix + "=" + prefix); err != nil {
					t.Fatal(err)
				}
				c := enginetest.OpenEngine(t, name, engine.Config{Target: target, Settings: set})
				t.Cleanup(func() { _ = c.(*search.Conn).DeleteIndex(context.Background(), prefix+"*") })
				return c
			},
			Settle: func(t testing.TB, c engine.Conn) {
				sc := c.(*search.Conn)
				if err := sc.Refresh(context.Background(), sc.Options().IndexPrefix+"*"); err != nil {
					t.Fatal(err)
				}
			},
			Strict: []string{name + ".refresh=true"},
		})
	}
}
