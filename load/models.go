package load

import (
	"fmt"

	"github.com/scalelab/scalelab/results"
)

// Names of the load models (as results records them).
const (
	ModelClosed = results.ModelClosed
	ModelRate   = results.ModelRate
	ModelPhases = results.ModelPhases
)

// ModelInfo describes a load model for the command line: its name, whether
// it is open (operations scheduled whatever the store's speed: latency
// counts from the intended start), the run flags that belong to it, and a
// line of usage.
type ModelInfo struct {
	Name  string
	Open  bool
	Flags []string
	Usage string
}

// Models are the load models, in the order `scalelab list models` shows.
var Models = []ModelInfo{
	{Name: ModelClosed, Open: false, Flags: []string{"users", "think"},
		Usage: "--users N [--think 2s|0-5s|exp:2s] for --duration or --ops (shared by all users)"},
	{Name: ModelRate, Open: true, Flags: []string{"users", "rate", "arrivals"},
		Usage: "--rate 5000/s [--arrivals constant|poisson] [--users max in flight]; latency from the intended start"},
	{Name: ModelPhases, Open: true, Flags: []string{"think", "phases"},
		Usage: "--phases 30s@1/s,30s@2/s: sessions arrive at a rate per phase, each closed-loop with think times"},
	{Name: ModelThreads, Open: false, Flags: []string{"users", "think", "ramp-up", "loops"},
		Usage: "--users N --ramp-up 25s --loops 100: JMeter's thread group; users start evenly over the ramp-up, each runs its loops (a session, or one operation for ycsb and search) and stops; operations in flight are reported"},
}

// ModelNames returns the models' names.
func ModelNames() []string {
	out := make([]string, len(Models))
	for i, m := range Models {
		out[i] = m.Name
	}
	return out
}

// LookupModel returns the model named name, or an error listing the models.
func LookupModel(name string) (ModelInfo, error) {
	for _, m := range Models {
		if m.Name == name {
			return m, nil
		}
	}
	return ModelInfo{}, fmt.Errorf("load model %q; allowed: %v", name, ModelNames())
}

// ModelsWithFlag returns the names of the models a run flag belongs to.
func ModelsWithFlag(flag string) []string {
	var out []string
	for _, m := range Models {
		for _, f := range m.Flags {
			if f == flag {
				out = append(out, m.Name)
			}
		}
	}
	return out
}
