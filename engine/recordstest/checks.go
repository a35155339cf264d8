package recordstest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/internal/testproc"
	"github.com/scalelab/scalelab/metrics"
)

// Vals3 is a record of three fields: s+"a", s+"b", s+"c".
func Vals3(s string) [][]byte { return [][]byte{[]byte(s + "a"), []byte(s + "b"), []byte(s + "c")} }

// OpenCollection opens collection name with fields on conn, failing t on
// error, and closes it when t ends.
func OpenCollection(t testing.TB, conn engine.Records, name string, fields []string, recreate bool) engine.Collection {
	t.Helper()
	col, err := conn.Collection(context.Background(), engine.CollectionSpec{Name: name, Fields: fields, Recreate: recreate})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { col.Close() })
	return col
}

// InsertExists checks, on an empty collection of three fields, that an
// insert of a stored key fails with errExists (class other) and leaves
// the record as it was (read by field 1), and that updates (of one field,
// of all) and deletes of a missing key are not found.
func InsertExists(t testing.TB, col engine.Collection, errExists error) {
	t.Helper()
	ctx := context.Background()
	if err := col.Insert(ctx, []byte("k1"), Vals3("1")); err != nil {
		t.Fatal(err)
	}
	err := col.Insert(ctx, []byte("k1"), Vals3("2"))
	if !errors.Is(err, errExists) || metrics.ClassOf(err) != metrics.Other {
		t.Fatalf("second insert: %v (class %v)", err, metrics.ClassOf(err))
	}
	var rows engine.Rows
	rows.Reset(3)
	if err := col.Get(ctx, []byte("k1"), 1, &rows); err != nil {
		t.Fatal(err)
	}
	if v, _ := rows.Value(0, 1); string(v) != "1b" {
		t.Errorf("the failed insert changed the record: %q", v)
	}
	if _, ok := rows.Value(0, 0); ok {
		t.Error("Get of field 1 returned field 0")
	}
	for name, err := range map[string]error{
		"update one field": col.Update(ctx, []byte("nope"), []int{1}, Vals3("x")),
		"update all":       col.Update(ctx, []byte("nope"), nil, Vals3("x")),
		"delete":           col.Delete(ctx, []byte("nope")),
	} {
		if !errors.Is(err, engine.ErrNotFound) || metrics.ClassOf(err) != metrics.NotFound {
			t.Errorf("%s of a missing key: %v", name, err)
		}
	}
}

// ConcurrentFieldUpdates checks, on a collection of three fields, that
// concurrent updates of different fields of one record all stay.
func ConcurrentFieldUpdates(t testing.TB, col engine.Collection) {
	t.Helper()
	ctx := context.Background()
	if err := col.Insert(ctx, []byte("k"), Vals3("0")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for f := range 3 {
		wg.Go(func() {
			v := make([][]byte, 3)
			for i := range 50 {
				v[f] = fmt.Appendf(nil, "f%d-%d", f, i)
				if err := col.Update(ctx, []byte("k"), []int{f}, v); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var rows engine.Rows
	rows.Reset(3)
	if err := col.Get(ctx, []byte("k"), engine.AllFields, &rows); err != nil {
		t.Fatal(err)
	}
	for f := range 3 {
		if v, _ := rows.Value(0, f); string(v) != fmt.Sprintf("f%d-49", f) {
			t.Errorf("field %d: %q, want the last update f%d-49", f, v, f)
		}
	}
}

// Classifier classes an engine's errors (the connections' Classify).
type Classifier func(ctx context.Context, err error) error

// StoppedServerTimesOut checks that a Get of key from col while the
// server process pid is stopped is classed as a timeout.
func StoppedServerTimesOut(t testing.TB, col engine.Collection, key []byte, pid int, classify Classifier) {
	t.Helper()
	ctx := context.Background()
	var rows engine.Rows
	rows.Reset(3)
	var err error
	testproc.WhileStopped(t, pid, func() { err = col.Get(ctx, key, engine.AllFields, &rows) })
	if err = classify(ctx, err); metrics.ClassOf(err) != metrics.Timeout {
		t.Errorf("server stopped: %v (class %v)", err, metrics.ClassOf(err))
	}
}

// CancelledAndForeign checks that a Get of key from col with a cancelled
// context is classed as cancelled, and that an error not the engine's
// (foreign) is left alone.
func CancelledAndForeign(t testing.TB, col engine.Collection, key []byte, classify Classifier, foreign error) {
	t.Helper()
	var rows engine.Rows
	rows.Reset(3)
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := classify(cctx, col.Get(cctx, key, engine.AllFields, &rows)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if got := classify(context.Background(), foreign); got != foreign {
		t.Errorf("a foreign error was changed: %v", got)
	}
}
