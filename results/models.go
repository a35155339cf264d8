package results

// The load models' names as run.json's load.model records them. They live
// with the results types so that readers of results (report, merge) use
// the same names as the load generator without depending on it.
const (
	ModelClosed  = "closed"
	ModelRate    = "rate"
	ModelPhases  = "phases"
	ModelThreads = "threads" // JMeter's thread group
)
