package memory

import (
	"context"
	"errors"

	"github.com/scalelab/scalelab/engine"
)

var _ engine.Records = (*Conn)(nil)

// collection keeps each record as a Record keyed by field name, in the
// store's one key space (a run has one collection per store; Recreate
// clears the store). Every operation but ReadBack injects the configured
// faults.
type collection struct {
	c     *Conn
	names []string
}

// Collection returns the store as a collection of records with spec's
// fields.
func (c *Conn) Collection(_ context.Context, spec engine.CollectionSpec) (engine.Collection, error) {
	if spec.Recreate {
		c.Clear()
	}
	return &collection{c: c, names: spec.Fields}, nil
}

// copyFields copies the requested fields of rec into row i of rows.
func (m *collection) copyFields(rec Record, field int, rows *engine.Rows, i int) {
	lo, hi := 0, len(m.names)
	if field >= 0 {
		lo, hi = field, field+1
	}
	for f := lo; f < hi; f++ {
		if v, ok := rec[m.names[f]]; ok {
			rows.Set(i, f, v)
		}
	}
}

func (m *collection) Get(ctx context.Context, key []byte, field int, rows *engine.Rows) error {
	return m.c.View(ctx, string(key), func(rec Record) error {
		m.copyFields(rec, field, rows, rows.Add(key))
		return nil
	})
}

func (m *collection) Scan(ctx context.Context, start []byte, n, field int, rows *engine.Rows) error {
	return m.c.Scan(ctx, string(start), n, func(key string, rec Record) error {
		m.copyFields(rec, field, rows, rows.AddString(key))
		return nil
	})
}

// record builds the Record of fields (every field when nil); the store
// copies the values.
func (m *collection) record(fields []int, vals [][]byte) Record {
	if fields == nil {
		rec := make(Record, len(m.names))
		for f, name := range m.names {
			rec[name] = vals[f]
		}
		return rec
	}
	rec := make(Record, len(fields))
	for _, f := range fields {
		rec[m.names[f]] = vals[f]
	}
	return rec
}

func (m *collection) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	return m.c.Insert(ctx, string(key), m.record(nil, vals))
}

func (m *collection) Update(ctx context.Context, key []byte, fields []int, vals [][]byte) error {
	return m.c.Update(ctx, string(key), m.record(fields, vals))
}

func (m *collection) Delete(ctx context.Context, key []byte) error {
	return m.c.Delete(ctx, string(key))
}

// loadRetries is how often the load retries a record that failed with an
// injected fault: memory.error_rate is meant for the run, and a load that
// any injected error aborts would make it unusable. Dropped writes
// (memory.drop_writes) stay dropped, so lost records still show.
const loadRetries = 100

func (m *collection) InsertBatch(ctx context.Context, b *engine.Batch) error {
	for i := range b.N {
		key, rec := string(b.Keys[i]), m.record(nil, b.Row(i))
		var err error
		for range loadRetries {
			if err = m.c.Insert(ctx, key, rec); !errors.Is(err, ErrInjected) {
				break
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *collection) AfterLoad(context.Context) error { return nil }

// Count counts without injected faults.
func (m *collection) Count(context.Context) (int64, error) { return int64(m.c.Len()), nil }

// MaxKey finds the highest key without injected faults.
func (m *collection) MaxKey(context.Context) ([]byte, error) {
	if k, ok := m.c.maxKey(); ok {
		return []byte(k), nil
	}
	return nil, nil
}

// ReadBack reads without injected faults.
func (m *collection) ReadBack(_ context.Context, keys [][]byte, field int, rows *engine.Rows) error {
	for _, key := range keys {
		err := m.c.Peek(string(key), func(rec Record) error {
			m.copyFields(rec, field, rows, rows.Add(key))
			return nil
		})
		if err != nil && !errors.Is(err, engine.ErrNotFound) {
			return err
		}
	}
	return nil
}

// Traits: reads see every write, scans run in key order, a missing key is
// told.
func (m *collection) Traits() engine.Traits {
	return engine.Traits{ReadsOwnWrites: true, KeyOrderedScans: true, TellsMissing: true}
}

func (m *collection) Close() error { return nil }

// maxKey returns the highest key stored.
func (c *Conn) maxKey() (string, bool) {
	var mx string
	found := false
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		for k := range s.m {
			if !found || k > mx {
				mx, found = k, true
			}
		}
		s.mu.RUnlock()
	}
	return mx, found
}

// HasRecords reports true: the engine's connections implement
// engine.Records.
func (*Engine) HasRecords() bool { return true }
