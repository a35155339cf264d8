package null

import (
	"context"
	"errors"

	"github.com/scalelab/scalelab/engine"
)

var _ engine.Records = (*Conn)(nil)

// collection does no I/O: every operation succeeds at once; reads and scans
// return no rows, counts 0, and the read-back is unsupported (nothing is
// stored to read).
type collection struct{}

// Collection returns a collection that stores nothing.
func (*Conn) Collection(context.Context, engine.CollectionSpec) (engine.Collection, error) {
	return collection{}, nil
}

func (collection) Get(context.Context, []byte, int, *engine.Rows) error       { return nil }
func (collection) Scan(context.Context, []byte, int, int, *engine.Rows) error { return nil }
func (collection) Insert(context.Context, []byte, [][]byte) error             { return nil }
func (collection) Update(context.Context, []byte, []int, [][]byte) error      { return nil }
func (collection) Delete(context.Context, []byte) error                       { return nil }
func (collection) InsertBatch(context.Context, *engine.Batch) error           { return nil }
func (collection) AfterLoad(context.Context) error                            { return nil }
func (collection) Count(context.Context) (int64, error)                       { return 0, nil }
func (collection) MaxKey(context.Context) ([]byte, error)                     { return nil, nil }
func (collection) Close() error                                               { return nil }

// ReadBack is unsupported: null stores nothing.
func (collection) ReadBack(context.Context, [][]byte, int, *engine.Rows) error {
	return errors.ErrUnsupported
}

// Traits: none of the guarantees hold, as nothing is stored.
func (collection) Traits() engine.Traits { return engine.Traits{} }

// HasRecords reports true: the engine's connections implement
// engine.Records.
func (*Engine) HasRecords() bool { return true }
