package kit

import (
	"context"
	"fmt"
	"slices"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
)

// Storage is the table of a scenario with storage of its own (logs,
// mhealth): engine name to the constructor of that engine's storage, each
// storage file adding itself from init. C is what the constructor gets
// besides the environment (the scenario's configuration), S the storage.
type Storage[C, S any] map[string]func(ctx context.Context, env scenario.Env, cfg C) (S, error)

// Engines lists the engines with storage, sorted.
func (s Storage[C, S]) Engines() []string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Open opens the storage of env's engine; an engine without storage is
// scenario.ErrEngineNotSupported, naming the engines the scenario runs on.
func (s Storage[C, S]) Open(ctx context.Context, scenarioName string, env scenario.Env, cfg C) (S, error) {
	open, ok := s[env.Engine]
	if !ok {
		var zero S
		return zero, fmt.Errorf("%s on %q: %w (%s supports %v)", scenarioName, env.Engine, scenario.ErrEngineNotSupported, scenarioName, s.Engines())
	}
	st, err := open(ctx, env, cfg)
	if err != nil {
		var zero S
		return zero, fmt.Errorf("%s on %s: %w", scenarioName, env.Engine, err)
	}
	return st, nil
}

// AsConn type-asserts env.Conn to the engine's concrete connection type,
// for a storage file.
func AsConn[T engine.Conn](env scenario.Env) (T, error) {
	c, ok := env.Conn.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("connection is %T, want %T", env.Conn, zero)
	}
	return c, nil
}
