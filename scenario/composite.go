package scenario

// Step says how an operation a session has just done belongs to a
// composite operation (Composer).
type Step uint8

// Steps of a composite operation.
const (
	// Outside: the operation is not part of a composite; an open one
	// stays open.
	Outside Step = iota
	// Begin: the operation opens the composite, which is timed from this
	// operation's intended start.
	Begin
	// Within: the operation continues the open composite.
	Within
	// End: the operation closes the open composite, which is recorded at
	// this operation's end.
	End
	// Whole: the operation alone is the composite (it opens and closes it).
	Whole
)

// Composer is an optional capability of a Session whose requests form
// larger operations that its client observes as one: the request, the
// waits its client makes after it and the requests that follow (mhealth's
// activity.client: the post, the wait for the index to refresh, the reads
// of totals and achievements). After each Do, the load model asks
// Composite and, when a composite closes, records it as the operation op
// (an index of Workload.Operations) with its latency from the intended
// start of the operation that opened it: the think times between its
// operations are in it, and in open models so is the opening operation's
// lag behind its schedule (no coordinated omission). The composite fails,
// with the first failure's class, when any of its operations failed; a
// composite left open when the session ends or the run stops is not
// recorded. The workload names its composite operations (Composites).
type Composer interface {
	Composite() (op int, step Step)
}

// Composites is an optional capability of a Workload whose sessions are
// Composers: it describes each composite operation by name, for run.json
// (a composite is not counted again in the run's totals: its operations
// are) and the report.
type Composites interface {
	Composites() map[string]string
}
