package results

// HistoryFile is the acknowledged-write audit's history in a results
// directory (format: docs/audit.md).
const HistoryFile = "history.log"

// Audit is run.json's "audit" section: what became of every audited write
// (counted in items: a bulk write of 100 records is 100) and what the
// read-back after the run found.
type Audit struct {
	// Attempted items: every write invoked.
	Attempted int64 `json:"attempted"`
	// Acknowledged items: the store said the write succeeded.
	Acknowledged int64 `json:"acknowledged"`
	// Failed items: the write failed with an error meaning "not applied".
	Failed int64 `json:"failed"`
	// Unknown items: timeouts, lost connections, in flight at the stop;
	// each may or may not be stored.
	Unknown int64 `json:"unknown"`
	// UnknownByClass splits Unknown by error class ("in_flight": no outcome
	// recorded).
	UnknownByClass map[string]int64 `json:"unknown_by_class,omitempty"`
	// Checked is whether the read-back ran to the end; the figures below
	// count the items it read.
	Checked bool `json:"checked"`
	// NotChecked says why the read-back did not run (interrupted run, an
	// engine that stores nothing).
	NotChecked string `json:"not_checked,omitempty"`
	// ReadBack is the number of items read back.
	ReadBack int64 `json:"read_back"`
	// Lost items: acknowledged, but the store does not hold them. Any lost
	// write fails the run (exit code 1).
	Lost int64 `json:"lost"`
	// LostIDs lists the first lost item ids, ascending.
	LostIDs []int64 `json:"lost_ids,omitempty"`
	// UnknownPresent and UnknownAbsent split the unknown items read back.
	UnknownPresent int64 `json:"unknown_present"`
	UnknownAbsent  int64 `json:"unknown_absent"`
	// FailedPresent counts failed items the store holds all the same (an
	// engine that classes an applied write as rejected): a warning.
	FailedPresent int64 `json:"failed_present,omitempty"`
	// Overwritten counts acknowledged items absent after a later run on
	// the same store (which may have deleted or reloaded them): not
	// judged.
	Overwritten int64 `json:"overwritten_since,omitempty"`
	// Seconds is the read-back's duration.
	Seconds float64 `json:"read_back_s"`
	// TornLine is set when the history ended in a partial line (the
	// process died while writing it), which was ignored.
	TornLine bool `json:"torn_line,omitempty"`
	// Error says why the read-back did not finish, if it did not.
	Error string `json:"error,omitempty"`
	// Registers checks updates and deletes, when the scenario logs them.
	Registers *RegisterAudit `json:"registers,omitempty"`
}

// RegisterAudit is the part of run.json's "audit" section about updates and
// deletes: registers (keys overwritten in place) whose final value the
// read-back checks against the writes' versions and real-time order
// (docs/audit.md).
type RegisterAudit struct {
	// Keys is the number of keys written (a ycsb record whose fields were
	// updated counts once); Registers the registers written when a key
	// holds several (ycsb: its fields), else 0; Writes the updates and
	// deletes logged, split by outcome.
	Keys      int64 `json:"keys"`
	Registers int64 `json:"registers,omitempty"`
	// KeysAtLeast marks the audit of a merged divided test: Keys and
	// Registers are the most any one segment wrote, a lower bound of the
	// whole's (the segments write the same keys).
	KeysAtLeast  bool  `json:"keys_at_least,omitempty"`
	Writes       int64 `json:"writes"`
	Acknowledged int64 `json:"acknowledged"`
	Failed       int64 `json:"failed"`
	Unknown      int64 `json:"unknown"`
	// Ambiguous counts registers whose final value may come from more than
	// one write (writes that overlapped in time, or whose outcome is
	// unknown): any of them is accepted.
	Ambiguous int64 `json:"ambiguous"`
	// Checked is whether the read-back ran to the end; ReadBack counts the
	// registers it read.
	Checked  bool  `json:"checked"`
	ReadBack int64 `json:"read_back"`
	// Lost registers hold an older value (or none) although a later write
	// was acknowledged; Resurrected ones hold a value although their last
	// acknowledged operation deleted them. Either fails the run (exit 1).
	Lost        int64 `json:"lost"`
	Resurrected int64 `json:"resurrected"`
	// Foreign counts registers of a divided test that hold another
	// segment's write (or are absent where this segment deleted nothing):
	// the segment cannot order its writes against the others', so it does
	// not judge them.
	Foreign int64 `json:"foreign,omitempty"`
	// Overwritten counts registers the store changed after the run (a
	// version later than any the run wrote; or, after a later run on the
	// same store, the value from before the run or none): not judged.
	Overwritten int64 `json:"overwritten_since,omitempty"`
	// Unlogged counts registers of a run whose process was killed that
	// hold a write of the run its history never recorded (the records
	// were still buffered when the process died), newer than every
	// acknowledged write of the register the history holds: not judged.
	Unlogged int64 `json:"not_yet_recorded,omitempty"`
	// Examples names the first lost or resurrected registers.
	Examples []RegisterLoss `json:"examples,omitempty"`
	// Seconds is the read-back's duration.
	Seconds float64 `json:"read_back_s"`
	// Error says why the read-back did not finish, if it did not.
	Error string `json:"error,omitempty"`
}

// RegisterLoss names a lost or resurrected register: its key, the version
// it held (-1 absent, 0 the value from before the run) and the versions it
// may have held.
type RegisterLoss struct {
	Key  int64    `json:"key"`
	Kind string   `json:"kind"`
	Seen int64    `json:"seen_version"`
	Want []string `json:"want"`
}
