package results

// Fault is one injected fault as run.json records it (`faults`). Times are
// seconds since the start of the load (t = 0 of series.csv and of the
// report's time charts; the warm-up, if any, is included).
type Fault struct {
	Spec string  `json:"spec"` // as given, e.g. "kill:node2@60s"
	Kind string  `json:"kind"` // kill, stop or restart
	Node string  `json:"node"`
	AtS  float64 `json:"at_s"`            // when it was scheduled
	ForS float64 `json:"for_s,omitempty"` // stop: how long the node stays stopped
	// InjectedS is when the signal was sent; nil if the run ended first.
	InjectedS *float64 `json:"injected_s,omitempty"`
	// EndedS is when a stop was lifted (SIGCONT) or a restarted node's
	// process was started again.
	EndedS *float64 `json:"ended_s,omitempty"`
	// Outcome is "done", "not reached" (the run ended before at_s) or
	// "failed" (see Error).
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// Before and After count the operations of the intervals that end in
	// the ErrorWindowS seconds before and after the injection (the interval
	// in which the fault happened ends after it and counts after).
	Before *ErrorWindow `json:"before,omitempty"`
	After  *ErrorWindow `json:"after,omitempty"`
}

// ErrorWindowS is the length of a fault's Before and After windows.
const ErrorWindowS = 10.0

// ErrorWindow counts operations over a stretch of a run's intervals.
type ErrorWindow struct {
	FromS   float64          `json:"from_s"`
	ToS     float64          `json:"to_s"`
	OK      int64            `json:"ok"`
	Errors  int64            `json:"errors"`
	ByClass map[string]int64 `json:"errors_by_class,omitempty"`
}

// Event kinds in run.json `events`.
const (
	EventFault    = "fault"     // a fault was injected (or lifted)
	EventNodeDown = "node_down" // a node's process is gone
	EventNodeUp   = "node_up"   // a node's process runs again
	EventHealth   = "health"    // the cluster's health changed
)

// Event is something that happened to the cluster during a run, at TS
// seconds since the start of the load (negative: before it, during the
// post-run wait it is past the end of the load).
type Event struct {
	TS     float64 `json:"t_s"`
	Kind   string  `json:"kind"`
	Node   string  `json:"node,omitempty"`
	Detail string  `json:"detail"`
}

// Recovery says how the cluster came back after the faults (run.json
// `recovery`).
type Recovery struct {
	// LastFaultS is when the last fault was injected (or a stop lifted).
	LastFaultS *float64 `json:"last_fault_s,omitempty"`
	// HealthyS is when the cluster was first healthy (green) again after
	// the last fault; nil if it never was before the wait ended.
	HealthyS *float64 `json:"healthy_s,omitempty"`
	// TimeToHealthyS is HealthyS - LastFaultS: an upper bound, by at most
	// CheckS (the cluster became healthy during that check or before).
	TimeToHealthyS *float64 `json:"time_to_healthy_s,omitempty"`
	// CheckS is how long the health check that found the cluster healthy
	// took.
	CheckS *float64 `json:"check_s,omitempty"`
	// Health is the last health seen, e.g. "green, 2 of 3 nodes".
	Health string `json:"health"`
	// WaitedS is how long the runner waited after the load for the cluster
	// to be healthy before the post-run checks.
	WaitedS float64 `json:"waited_s"`
	// TimedOut is set when the wait hit its bound with the cluster still
	// unhealthy.
	TimedOut bool `json:"timed_out,omitempty"`
}

// FaultsLogFile streams a run's faults and events as they happen, one JSON
// object per line ({"event": ...} or {"fault": ...}, the latest state of
// fault number "index"), so that a run killed hard still has them.
const FaultsLogFile = "faults.log"

// FaultLogLine is one line of faults.log.
type FaultLogLine struct {
	Event *Event `json:"event,omitempty"`
	Fault *Fault `json:"fault,omitempty"`
	Index int    `json:"index,omitempty"` // the fault's position among the run's --fault flags
}
