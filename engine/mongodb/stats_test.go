package mongodb_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cluster"
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

// A FerretDB cluster's health: green while FerretDB and its backend run,
// red when the backend is gone (nothing is served), unreachable when
// FerretDB is.
func TestFerretDBHealth(t *testing.T) {
	t.Parallel()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	alive, dead := os.Getpid(), gone.Process.Pid
	p, err := cluster.Lookup(mongodb.FerretDB)
	if err != nil {
		t.Fatal(err)
	}
	hc := p.(cluster.HealthChecker)
	for _, c := range []struct {
		pg, ferret int
		want       string
	}{
		{alive, alive, "green, 2 of 2 nodes"},
		{dead, alive, "red, 1 of 2 nodes (pg1 down)"},
		{alive, dead, "unreachable, 1 of 2 nodes (node1 down)"},
	} {
		st := &cluster.State{Nodes: []cluster.Node{{Name: "pg1", Role: "postgres", PID: c.pg}, {Name: "node1", Role: mongodb.FerretDB, PID: c.ferret}}}
		h, err := hc.Health(context.Background(), st)
		if err != nil || h.String() != c.want {
			t.Errorf("health %v, %v; want %s", h, err, c.want)
		}
	}
}
