package scenario

import (
	"context"
	"fmt"

	"github.com/scalelab/scalelab/engine"
)

// RecordEngines lists the engines a scenario built on engine.Records runs
// on: every registered engine that implements it.
func RecordEngines() []string { return engine.WithRecords() }

// OpenCollection opens the collection of spec on the store connection of
// env, for scenarios built on engine.Records; an engine without the
// capability is ErrEngineNotSupported, naming the engines that have it.
func OpenCollection(ctx context.Context, scenarioName string, env Env, spec engine.CollectionSpec) (engine.Collection, error) {
	r, ok := env.Conn.(engine.Records)
	if !ok {
		return nil, fmt.Errorf("%s on %q: %w (%s runs on %v)", scenarioName, env.Engine, ErrEngineNotSupported, scenarioName, RecordEngines())
	}
	c, err := r.Collection(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", scenarioName, env.Engine, err)
	}
	return c, nil
}
