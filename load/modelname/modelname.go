// Package modelname holds the names of the load models (package load),
// as run.json's load.model records them, in a package of their own that
// imports nothing, so that readers of results (report) use the same names
// without depending on the load generator.
package modelname

// Names of the load models.
const (
	Closed  = "closed"
	Rate    = "rate"
	Phases  = "phases"
	Threads = "threads" // JMeter's thread group
)
