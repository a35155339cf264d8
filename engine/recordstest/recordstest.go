// Package recordstest is the conformance suite of the engine.Records
// capability: every engine that implements it runs Run against a real
// store from its own tests.
package recordstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/scalelab/scalelab/engine"
)

// Open makes a collection for a test: a connection to a fresh, isolated
// store, cleaned when t ends.
type Open func(t testing.TB, spec engine.CollectionSpec) engine.Collection

func key(i int) []byte { return fmt.Appendf(nil, "k%06d", i) }

func vals(i int, tag string) [][]byte {
	return [][]byte{fmt.Appendf(nil, "a%d%s", i, tag), fmt.Appendf(nil, "b%d%s", i, tag), fmt.Appendf(nil, "c%d%s", i, tag)}
}

// refresh makes acknowledged writes visible to scans and counts where they
// lag (a search index).
func refresh(ctx context.Context, t testing.TB, c engine.Collection) {
	t.Helper()
	if c.Traits().ScansLag {
		if err := c.AfterLoad(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// want checks that row i of rows is key with vals (field AllFields) or
// with vals[field] only.
func want(t testing.TB, rows *engine.Rows, i int, k []byte, field int, v [][]byte) {
	t.Helper()
	if !bytes.Equal(rows.Key(i), k) {
		t.Fatalf("row %d: key %q, want %q", i, rows.Key(i), k)
	}
	for f := range v {
		got, ok := rows.Value(i, f)
		if field >= 0 && f != field {
			continue
		}
		if !ok || !bytes.Equal(got, v[f]) {
			t.Fatalf("%s field %d: %q (present %v), want %q", k, f, got, ok, v[f])
		}
	}
}

// Run runs the suite: load, get, scan, update, delete, insert, count, the
// highest key and the read-back. On a collection without scans
// (Traits().NoScans) it checks instead that Scan, Count and MaxKey fail
// with errors.ErrUnsupported, and that Recreate empties it by Get.
func Run(t *testing.T, open Open) {
	ctx := context.Background()
	spec := engine.CollectionSpec{Name: "recordstest", Fields: []string{"fa", "fb", "fc"}, Recreate: true, Records: 100}
	c := open(t, spec)
	defer c.Close()
	s := &suite{ctx: ctx, t: t, c: c, tr: c.Traits()}
	s.load()
	s.gets()
	s.scan()
	s.updates()
	s.deleteInsert()
	refresh(ctx, t, c)
	s.counts()
	s.readBack()
	s.recreated(open, spec)
}

// suite is the collection Run checks, its traits and the rows its reads
// reuse from step to step.
type suite struct {
	ctx  context.Context
	t    testing.TB
	c    engine.Collection
	tr   engine.Traits
	rows engine.Rows
}

// load inserts records 0 to 99 in two batches and ends the load.
func (s *suite) load() {
	t, c := s.t, s.c
	b := engine.NewBatch(3, 50)
	for lo := 0; lo < 100; lo += 50 {
		b.Reset()
		for i := lo; i < lo+50; i++ {
			b.Keys[b.N] = key(i)
			copy(b.Row(b.N), vals(i, ""))
			b.N++
		}
		if err := c.InsertBatch(s.ctx, b); err != nil {
			t.Fatalf("InsertBatch: %v", err)
		}
	}
	if err := c.AfterLoad(s.ctx); err != nil {
		t.Fatalf("AfterLoad: %v", err)
	}
}

// gets checks Get of a whole record, of one field and of a missing key.
func (s *suite) gets() {
	ctx, t, c, rows := s.ctx, s.t, s.c, &s.rows
	rows.Reset(3)
	if err := c.Get(ctx, key(7), engine.AllFields, rows); err != nil {
		t.Fatalf("Get: %v", err)
	}
	want(t, rows, 0, key(7), engine.AllFields, vals(7, ""))
	rows.Reset(3)
	if err := c.Get(ctx, key(8), 1, rows); err != nil {
		t.Fatalf("Get field: %v", err)
	}
	want(t, rows, 0, key(8), 1, vals(8, ""))
	rows.Reset(3)
	if err := c.Get(ctx, []byte("nope"), engine.AllFields, rows); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Get of a missing key: %v, want ErrNotFound", err)
	}
}

// scan checks a scan of 5 records (in key order where the traits promise
// it), or that a collection without scans refuses them.
func (s *suite) scan() {
	ctx, t, c, rows, tr := s.ctx, s.t, s.c, &s.rows, s.tr
	rows.Reset(3)
	if tr.NoScans {
		unsupported(ctx, t, c)
	} else if err := c.Scan(ctx, key(10), 5, engine.AllFields, rows); err != nil {
		t.Fatalf("Scan: %v", err)
	} else if rows.Len() != 5 {
		t.Fatalf("Scan returned %d rows, want 5", rows.Len())
	}
	if tr.KeyOrderedScans && !tr.NoScans {
		for i := range 5 {
			want(t, rows, i, key(10+i), engine.AllFields, vals(10+i, ""))
		}
	}
}

// updates checks updates of some fields and of all, and, where the
// collection tells a missing key, that updates and deletes of one fail
// with ErrNotFound.
func (s *suite) updates() {
	ctx, t, c, rows := s.ctx, s.t, s.c, &s.rows
	if err := c.Update(ctx, key(20), []int{0, 2}, vals(20, "u")); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if err := c.Update(ctx, key(21), nil, vals(21, "u")); err != nil {
		t.Fatalf("Update all: %v", err)
	}
	rows.Reset(3)
	if err := c.Get(ctx, key(20), engine.AllFields, rows); err != nil {
		t.Fatal(err)
	}
	want(t, rows, 0, key(20), engine.AllFields, [][]byte{[]byte("a20u"), []byte("b20"), []byte("c20u")})
	if s.tr.TellsMissing {
		if err := c.Update(ctx, []byte("nope"), nil, vals(0, "")); !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("Update of a missing key: %v, want ErrNotFound", err)
		}
		if err := c.Delete(ctx, []byte("nope")); !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("Delete of a missing key: %v, want ErrNotFound", err)
		}
	}
}

// deleteInsert deletes record 30 and inserts record 500, which, where the
// collection tells a stored key, cannot be inserted again.
func (s *suite) deleteInsert() {
	ctx, t, c, rows := s.ctx, s.t, s.c, &s.rows
	if err := c.Delete(ctx, key(30)); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	rows.Reset(3)
	if err := c.Get(ctx, key(30), engine.AllFields, rows); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
	}
	if err := c.Insert(ctx, key(500), vals(500, "")); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	if s.tr.TellsMissing {
		if err := c.Insert(ctx, key(500), vals(500, "")); err == nil {
			t.Fatal("Insert of an existing key succeeded")
		}
	}
}

// counts checks, on a collection with scans, the count of records and
// the highest key.
func (s *suite) counts() {
	if s.tr.NoScans {
		return
	}
	if n, err := s.c.Count(s.ctx); err != nil || n != 100 {
		s.t.Fatalf("Count = %d, %v; want 100", n, err)
	}
	if mx, err := s.c.MaxKey(s.ctx); err != nil || !bytes.Equal(mx, key(500)) {
		s.t.Fatalf("MaxKey = %q, %v; want %q", mx, err, key(500))
	}
}

// readBack checks that a read-back of records 20, 30 and 500 and a
// missing key returns the two stored records, in any order.
func (s *suite) readBack() {
	t, rows := s.t, &s.rows
	rows.Reset(3)
	if err := s.c.ReadBack(s.ctx, [][]byte{key(20), key(30), key(500), []byte("nope")}, engine.AllFields, rows); err != nil {
		t.Fatalf("ReadBack: %v", err)
	}
	if rows.Len() != 2 {
		t.Fatalf("ReadBack returned %d rows, want 2 (k000020, k000500)", rows.Len())
	}
	got := map[string]int{string(rows.Key(0)): 0, string(rows.Key(1)): 1}
	i20, ok20 := got[string(key(20))]
	i500, ok500 := got[string(key(500))]
	if !ok20 || !ok500 {
		t.Fatalf("ReadBack rows %q, %q", rows.Key(0), rows.Key(1))
	}
	want(t, rows, i20, key(20), engine.AllFields, [][]byte{[]byte("a20u"), []byte("b20"), []byte("c20u")})
	want(t, rows, i500, key(500), engine.AllFields, vals(500, ""))
}

// recreated opens the collection again with spec (Recreate) and checks
// that it is empty: by Count, or by Get on a collection without scans.
func (s *suite) recreated(open Open, spec engine.CollectionSpec) {
	ctx, t, rows := s.ctx, s.t, &s.rows
	c2 := open(t, spec)
	defer c2.Close()
	refresh(ctx, t, c2)
	if s.tr.NoScans {
		rows.Reset(3)
		if err := c2.Get(ctx, key(7), engine.AllFields, rows); !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("Get after Recreate: %v, want ErrNotFound", err)
		}
		return
	}
	if n, err := c2.Count(ctx); err != nil || n != 0 {
		t.Fatalf("Count after Recreate = %d, %v; want 0", n, err)
	}
}

// unsupported checks that a collection without scans (Traits().NoScans)
// says so from Scan, Count and MaxKey.
func unsupported(ctx context.Context, t testing.TB, c engine.Collection) {
	t.Helper()
	var rows engine.Rows
	rows.Reset(3)
	if err := c.Scan(ctx, key(10), 5, engine.AllFields, &rows); !errors.Is(err, errors.ErrUnsupported) || rows.Len() != 0 {
		t.Fatalf("Scan without scans: %v (%d rows), want errors.ErrUnsupported", err, rows.Len())
	}
	if _, err := c.Count(ctx); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Count without scans: %v, want errors.ErrUnsupported", err)
	}
	if _, err := c.MaxKey(ctx); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("MaxKey without scans: %v, want errors.ErrUnsupported", err)
	}
}

// RunConn runs the suite on the collections of a connection with the
// records capability.
func RunConn(t *testing.T, conn engine.Conn) {
	t.Helper()
	r, ok := conn.(engine.Records)
	if !ok {
		t.Fatalf("%T has no records", conn)
	}
	Run(t, func(t testing.TB, spec engine.CollectionSpec) engine.Collection {
		col, err := r.Collection(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		return col
	})
}
