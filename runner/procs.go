package runner

import (
	"os"
	"runtime"

	"github.com/scalelab/scalelab/engine"
)

// shareProcessors keeps a processor for an open model's generator when the
// store runs its statements on this process's own processors (SQLite,
// compiled to Go): the store may run one statement per processor the
// process may use, and the generator gets one processor more, so that a
// busy store never holds back the wake-up of a session that is due (a
// goroutine made runnable behind a store's statements waits up to the Go
// scheduler's 10 ms time slice for each of them). A GOMAXPROCS the user
// set is left as it is. It returns the function that restores the
// processors, and records in p how many the process may use.
func (p *Plan) shareProcessors(cfg *engine.Config) (restore func()) {
	p.cores = runtime.GOMAXPROCS(0)
	ps, ok := p.eng.(engine.ProcessorShare)
	if !ok || !ps.ShareProcessors() || !p.model.Open() || os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	cfg.Processors = p.cores
	runtime.GOMAXPROCS(p.cores + 1)
	return func() { runtime.GOMAXPROCS(p.cores) }
}

// generatorCores is how many processors the process may use, as before
// shareProcessors gave the generator one more.
func (p *Plan) generatorCores() int {
	if p.cores > 0 {
		return p.cores
	}
	return runtime.GOMAXPROCS(0)
}
