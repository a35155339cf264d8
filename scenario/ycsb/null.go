package ycsb

import (
	"context"
	"errors"

	"github.com/scalelab/scalelab/engine/null"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[null.Name] = openNull }

// errVerifyNull is returned by Open for ycsb.verify=true on the null engine.
var errVerifyNull = errors.New("ycsb on null: ycsb.verify=true needs an engine that stores data; null stores nothing (use memory or sqlite)")

// nullStore does no I/O: every operation succeeds at once. Reads and scans
// return no rows, which only ycsb.verify would notice, and Open refuses it.
type nullStore struct{}

func openNull(_ context.Context, env scenario.Env, cfg *config) (store, error) {
	if _, err := asConn[*null.Conn](env); err != nil {
		return nil, err
	}
	if cfg.verify {
		return nil, errVerifyNull
	}
	return nullStore{}, nil
}

func (nullStore) read(context.Context, []byte, int, *result) error      { return nil }
func (nullStore) scan(context.Context, []byte, int, int, *result) error { return nil }
func (nullStore) update(context.Context, []byte, int, [][]byte) error   { return nil }
func (nullStore) insert(context.Context, []byte, [][]byte) error        { return nil }
func (nullStore) insertBatch(context.Context, *batch) error             { return nil }
func (nullStore) close() error                                          { return nil }
