package ycsb

import (
	"context"
	"errors"

	"github.com/scalelab/scalelab/engine/memory"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[memory.Name] = openMemory }

// memoryStore keeps each record as a memory.Record keyed by field name.
type memoryStore struct {
	c     *memory.Conn
	names []string
}

func openMemory(_ context.Context, env scenario.Env, cfg *config) (store, error) {
	c, err := asConn[*memory.Conn](env)
	if err != nil {
		return nil, err
	}
	if cfg.load {
		c.Clear()
	}
	return &memoryStore{c: c, names: fieldNames(cfg.fields)}, nil
}

// copyFields copies the requested fields of rec into row i of res.
func (m *memoryStore) copyFields(rec memory.Record, field int, res *result, i int) {
	lo, hi := 0, len(m.names)
	if field >= 0 {
		lo, hi = field, field+1
	}
	for f := lo; f < hi; f++ {
		if v, ok := rec[m.names[f]]; ok {
			res.set(i, f, v)
		}
	}
}

func (m *memoryStore) read(ctx context.Context, key []byte, field int, res *result) error {
	return m.c.View(ctx, string(key), func(rec memory.Record) error {
		m.copyFields(rec, field, res, res.addRow(key))
		return nil
	})
}

// readForAudit is read without injected faults (auditReader).
func (m *memoryStore) readForAudit(_ context.Context, key []byte, field int, res *result) error {
	return m.c.Peek(string(key), func(rec memory.Record) error {
		m.copyFields(rec, field, res, res.addRow(key))
		return nil
	})
}

func (m *memoryStore) scan(ctx context.Context, start []byte, n, field int, res *result) error {
	return m.c.Scan(ctx, string(start), n, func(key string, rec memory.Record) error {
		m.copyFields(rec, field, res, res.addRowString(key))
		return nil
	})
}

// record builds the memory.Record of field (every field when < 0); the
// store copies the values.
func (m *memoryStore) record(field int, vals [][]byte) memory.Record {
	if field >= 0 {
		return memory.Record{m.names[field]: vals[field]}
	}
	rec := make(memory.Record, len(m.names))
	for f, name := range m.names {
		rec[name] = vals[f]
	}
	return rec
}

func (m *memoryStore) update(ctx context.Context, key []byte, field int, vals [][]byte) error {
	return m.c.Update(ctx, string(key), m.record(field, vals))
}

func (m *memoryStore) insert(ctx context.Context, key []byte, vals [][]byte) error {
	return m.c.Insert(ctx, string(key), m.record(-1, vals))
}

// loadRetries is how often the load retries a record that failed with an
// injected fault: memory.error_rate is meant for the run, and a load that
// any injected error aborts would make it unusable. Dropped writes
// (memory.drop_writes) stay dropped, so lost records still show.
const loadRetries = 100

func (m *memoryStore) insertBatch(ctx context.Context, b *batch) error {
	for i := range b.n {
		key, rec := string(b.keys[i]), m.record(-1, b.row(i))
		var err error
		for range loadRetries {
			if err = m.c.Insert(ctx, key, rec); !errors.Is(err, memory.ErrInjected) {
				break
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *memoryStore) close() error { return nil }
