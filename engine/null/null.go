// Package null is the "null" engine: a store that does nothing and answers at
// once. Running a scenario against it measures scalelab's own overhead (the
// load model, the scenario's generators and the metrics recorders).
package null

import (
	"context"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/setting"
)

// Name is the engine's registry name.
const Name = "null"

func init() { engine.Register(&Engine{}) }

// Engine is the null engine. Its zero value is ready to use.
type Engine struct{}

// Name returns "null".
func (*Engine) Name() string { return Name }

// Description is one line for `scalelab list`.
func (*Engine) Description() string {
	return "does nothing and returns at once; measures scalelab's own overhead"
}

// Settings returns nil: the null engine has no settings.
func (*Engine) Settings() []setting.Spec { return nil }

// Open returns a connection that stores nothing. It never fails unless ctx
// is already done.
func (*Engine) Open(ctx context.Context, cfg engine.Config) (engine.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Conn{}, nil
}

// Conn is a connection to the null engine. Scenarios' null storage files
// type-assert engine.Conn to *Conn and then perform no I/O at all.
type Conn struct{}

// Info describes the null engine: version "n/a", target "none".
func (*Conn) Info(context.Context) (engine.Info, error) {
	return engine.Info{Engine: Name, Version: "n/a", Target: "none"}, nil
}

// Close does nothing.
func (*Conn) Close() error { return nil }

// Embedded reports that the null engine has no server: whatever it costs
// is scalelab's own, and no tier is left unobserved.
func (*Engine) Embedded() bool { return true }
