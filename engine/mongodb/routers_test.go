package mongodb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/engine/mongodb/mongotest"
)

func TestMain(m *testing.M) { enginetest.Main(m) }

// TestRoutersSpread sends operations to two servers taken for routers
// (mongodb.routers=random): each gets about half, as the per-server
// request counts for run.json show.
func TestRoutersSpread(t *testing.T) {
	mongotest.Server(t)
	var hosts []string
	for range 2 {
		st := enginetest.StartCluster(t, cluster.Spec{Engine: mongodb.FerretDB}, "", time.Minute)
		hosts = append(hosts, fmt.Sprintf("%s:%d", st.Nodes[0].Host, st.Nodes[0].Port))
	}
	defer mongodb.AssumeRouters()()
	tg, err := mongodb.ParseTarget("mongodb://" + strings.Join(hosts, ",") + "/spread")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := mongodb.Connect(ctx, tg, "", mongodb.OptionsFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := c.RequestsPerServer()
	col, err := c.Collection(ctx, engine.CollectionSpec{Name: "spread", Fields: []string{"f"}})
	if err != nil {
		t.Fatal(err)
	}
	var rows engine.Rows
	const n = 400
	for range n {
		rows.Reset(1)
		if err := col.Get(ctx, []byte("absent"), engine.AllFields, &rows); err == nil {
			t.Fatal("found a key never written")
		}
	}
	after := c.RequestsPerServer()
	for _, h := range hosts {
		got := after[h] - before[h]
		// Binomial(400, 1/2): 200 +- 10; 140 is 6 standard deviations off.
		if got < 140 || got > 260 {
			t.Errorf("router %s got %d of %d requests, want about half: %v", h, got, n, after)
		}
	}
}
