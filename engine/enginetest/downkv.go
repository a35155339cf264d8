package enginetest

import (
	"context"
	"fmt"
	"time"

	"github.com/scalelab/scalelab/engine"
)

// ErrCacheDown is what every call of DownKV returns: the cache server is
// unreachable.
var ErrCacheDown = fmt.Errorf("cache server down: %w", engine.ErrUnreachable)

// DownKV is a cache tier that is down: every call fails with
// ErrCacheDown. Tests put it in a scenario's place of the cache to see
// what a read does then (cache.on_error).
type DownKV struct{}

// Get fails.
func (DownKV) Get(context.Context, string) ([]byte, error) { return nil, ErrCacheDown }

// Set fails.
func (DownKV) Set(context.Context, string, []byte, time.Duration) error { return ErrCacheDown }

// Delete fails.
func (DownKV) Delete(context.Context, string) error { return ErrCacheDown }
