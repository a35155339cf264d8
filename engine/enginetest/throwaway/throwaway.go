// Package throwaway is an engine that exists only in tests, to prove the
// steps of "Adding an engine" (docs/ARCHITECTURE.md): it registers itself,
// implements engine.Records (through an in-process store it owns) and
// registers a test provider, and nothing else: no scenario has a file for
// it, yet the ycsb and social conformance suites run against it.
package throwaway

import (
	"context"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest"
	"github.com/scalelab/scalelab/engine/memory"
	"github.com/scalelab/scalelab/setting"
)

// Name is the engine's registry name.
const Name = "throwaway"

func init() {
	engine.Register(Engine{})
	enginetest.Register(enginetest.Provider{Engine: Name, Open: func(t testing.TB, set *setting.Set) engine.Conn {
		return enginetest.OpenEngine(t, Name, engine.Config{Settings: set})
	}})
}

// Engine is the throwaway engine.
type Engine struct{}

var (
	_ engine.RecordsEngine = Engine{}
	_ engine.Records       = (*Conn)(nil)
)

// Name returns "throwaway".
func (Engine) Name() string { return Name }

// Description is one line for `scalelab list`.
func (Engine) Description() string {
	return "a test-only engine proving that an engine with records needs no scenario file"
}

// Settings declares none.
func (Engine) Settings() []setting.Spec { return nil }

// HasRecords reports true.
func (Engine) HasRecords() bool { return true }

// Open returns a new, empty store.
func (Engine) Open(context.Context, engine.Config) (engine.Conn, error) {
	return &Conn{store: memory.New(memory.Faults{})}, nil
}

// Conn is a connection to a throwaway store.
type Conn struct{ store *memory.Conn }

// Info describes the store.
func (c *Conn) Info(context.Context) (engine.Info, error) {
	return engine.Info{Engine: Name, Version: "n/a", Target: "in-process"}, nil
}

// Close does nothing.
func (c *Conn) Close() error { return nil }

// Collection returns the store's collection of spec.
func (c *Conn) Collection(ctx context.Context, spec engine.CollectionSpec) (engine.Collection, error) {
	return c.store.Collection(ctx, spec)
}
