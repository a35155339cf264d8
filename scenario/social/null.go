package social

import (
	"context"

	"github.com/scalelab/scalelab/engine/null"
	"github.com/scalelab/scalelab/scenario"
)

func init() { openers[null.Name] = openNull }

// nullStore does no I/O: it measures scalelab's own cost per operation.
// Reads and scans return nothing, and the workload skips its checks on it
// (Workload.null).
type nullStore struct{}

func openNull(_ context.Context, env scenario.Env, _ *config) (store, error) {
	if _, err := asConn[*null.Conn](env); err != nil {
		return nil, err
	}
	return &nullStore{}, nil
}

func (*nullStore) read(context.Context, string, *User) error                    { return nil }
func (*nullStore) update(context.Context, string, string, int64) error          { return nil }
func (*nullStore) insert(context.Context, *User) error                          { return nil }
func (*nullStore) remove(context.Context, string) error                         { return nil }
func (*nullStore) scan(context.Context, string, int, func(u *User) error) error { return nil }
func (*nullStore) insertBatch(context.Context, []User) error                    { return nil }
func (*nullStore) afterLoad(context.Context) error                              { return nil }
func (*nullStore) count(context.Context) (int64, error)                         { return 0, nil }
func (*nullStore) maxKey(context.Context) (string, error)                       { return "", nil }
func (*nullStore) close() error                                                 { return nil }
