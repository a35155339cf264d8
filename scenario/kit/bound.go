package kit

import (
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/scenario"
)

// StoreBound is the bound on operations at once of a workload whose
// every operation holds at most one of its store's connections at a time
// (scenario.Limited): the pool of a store in this process
// (engine.StatementPool: SQLite), whose statements run on the load
// generator's processors. Embedded in a Workload, it gives the Inflight
// method; its zero value declares no bound.
type StoreBound struct{ n int }

// InProcessBound returns the bound of env's store when its statements run
// in this process, else none. Behind a cache (cached) there is none: a
// hit does not wait for the store's connections, and holding every
// operation to them would cap the hits at the store's pace.
func InProcessBound(env scenario.Env, cached bool) StoreBound {
	if p, ok := env.Conn.(engine.StatementPool); ok && !cached {
		return StoreBound{n: p.Statements()}
	}
	return StoreBound{}
}

// Inflight returns the bound (0: none) and whether the operations run in
// this process.
func (b StoreBound) Inflight() (n int, inProcess bool) { return b.n, b.n > 0 }
