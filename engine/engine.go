// Package engine holds the Engine contract that every data store implements,
// the registry engines add themselves to, and the sentinel errors scenarios
// and engines share.
package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/setting"
)

// Engine is a kind of data store. Implementations register themselves with
// Register from an init function.
type Engine interface {
	// Name is the registry name, e.g. "sqlite".
	Name() string
	// Description is one line for `scalelab list`.
	Description() string
	// Settings declares the engine's settings; every key starts with Name()+".".
	Settings() []setting.Spec
	// Open connects to the store described by cfg.
	Open(ctx context.Context, cfg Config) (Conn, error)
}

// Config is what Open needs: the target, the resolved settings and the
// results directory (where embedded engines keep their files by default).
type Config struct {
	Target   string         // --target; "" means the engine's default
	Settings *setting.Set   // resolved settings (engine and scenario keys)
	Dir      string         // the run's results directory
	Cluster  *cluster.State // set with --cluster: a local cluster scalelab started
}

// Conn is an open connection to a store. Scenarios type-assert it to the
// engine's concrete connection type in their per-engine storage files.
type Conn interface {
	// Info describes the server for run.json. It must not contain secrets.
	Info(ctx context.Context) (Info, error)
	// Close releases the connection.
	Close() error
}

// Info describes a connected store.
type Info struct {
	Engine  string            `json:"engine"`
	Version string            `json:"version"`
	Target  string            `json:"target"` // redacted: no password
	Extra   map[string]string `json:"extra,omitempty"`
}

// Sentinel errors shared by engines and scenarios. Each carries its class.
var (
	// ErrNotFound means a record that should exist was not found.
	ErrNotFound = metrics.WithClass(metrics.NotFound, errors.New("not found"))
	// ErrIntegrity means a store returned wrong data (a failed verification).
	ErrIntegrity = metrics.WithClass(metrics.Integrity, errors.New("integrity check failed"))
	// ErrUnreachable means the store could not be reached at all.
	ErrUnreachable = errors.New("engine unreachable")
)

var (
	mu       sync.RWMutex
	registry = map[string]Engine{}
)

// Register makes an engine available by name. It panics on a nil engine or a
// duplicate name, like database/sql.Register.
func Register(e Engine) {
	mu.Lock()
	defer mu.Unlock()
	if e == nil {
		panic("engine: Register of nil engine")
	}
	name := e.Name()
	if _, dup := registry[name]; dup {
		panic("engine: Register called twice for " + name)
	}
	registry[name] = e
}

// Lookup returns the engine registered under name; the error names the
// nearest registered engine.
func Lookup(name string) (Engine, error) {
	mu.RLock()
	e, ok := registry[name]
	mu.RUnlock()
	if ok {
		return e, nil
	}
	msg := fmt.Sprintf("unknown engine %q; available: %v", name, Names())
	if n := setting.Nearest(name, Names()); n != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", n)
	}
	return nil, errors.New(msg)
}

// Names returns the registered engine names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
