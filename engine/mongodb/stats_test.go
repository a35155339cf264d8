package mongodb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/mongodb"
	"github.com/scalelab/scalelab/engine/mongodb/mongotest"
)

// TestSampleStats reads serverStatus before and after inserts: the
// server's insert counter moves by what the test wrote.
func TestSampleStats(t *testing.T) {
	st := mongotest.Server(t)
	ctx := context.Background()
	tg, err := mongodb.ParseTarget(fmt.Sprintf("mongodb://%s:%d/stats%s", st.Nodes[0].Host, st.Nodes[0].Port, enginetest.Name()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := mongodb.Connect(ctx, tg, "", mongodb.OptionsFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	col, err := c.Collection(ctx, engine.CollectionSpec{Name: "s", Fields: []string{"f"}})
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.SampleStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		if err := col.Insert(ctx, []byte(fmt.Sprintf("k%02d", i)), [][]byte{[]byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	after, err := c.SampleStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range after {
		keys = append(keys, k)
	}
	t.Logf("%d figures: %s", len(after), strings.Join(keys, " "))
	moved := false
	for _, k := range []string{"mongo.opcounters.insert", "mongo.metrics.commands.insert.total"} {
		if a, ok := after[k]; ok && a-before[k] >= n {
			moved = true
		}
	}
	if !moved {
		t.Errorf("no insert counter moved by %d: before %v, after %v", n, before, after)
	}
}
