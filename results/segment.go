package results

import "time"

// Segment is run.json's "segment": which share of a divided test the run
// was (`scalelab run --segment I/N`), where it ran, when its load started
// against the shared start instant, and how far its clock may be off.
// Every segment of one test carries the same TestHash.
type Segment struct {
	Index int    `json:"index"`
	Count int    `json:"count"`
	Host  string `json:"host"`
	// StartAt is --start-at: the wall-clock instant every segment's load
	// starts at, t = 0 of the merged timeline.
	StartAt *time.Time `json:"start_at,omitempty"`
	// StartLateMs is how long after StartAt this segment's load really
	// started (negative: before it).
	StartLateMs float64 `json:"start_late_ms"`
	// LoadStart is when this segment's load started (t = 0 of its
	// interval log), to the microsecond.
	LoadStart *time.Time `json:"load_start,omitempty"`
	// Clock is the estimate of this host's clock error.
	Clock Clock `json:"clock"`
	// TestHash identifies the test: a hash of the configuration every
	// segment shares (scenario, engine, settings, load model and its whole
	// test's parameters, seed, segment count, start instant). `scalelab
	// merge` refuses to add segments whose hashes differ.
	TestHash string `json:"test_hash"`
}

// Clock is what the host knows about its clock's error, from the
// kernel's clock discipline (adjtimex): whether an NTP (or PTP) daemon
// keeps it synchronised, and its estimated and maximum error.
type Clock struct {
	Synchronised bool    `json:"synchronised"`
	EstErrorMs   float64 `json:"est_error_ms"`
	MaxErrorMs   float64 `json:"max_error_ms"`
	Source       string  `json:"source"`
	Note         string  `json:"note,omitempty"`
}
