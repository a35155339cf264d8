package logs

// Record is one log line, as the study "When Logs Become Big Data" stored
// it: a numeric id, a 10-digit epoch-seconds timestamp, the machine and
// service that logged it (at most 30 characters each), a syslog severity
// (0 emergency ... 7 debug) and a 255-character message.
type Record struct {
	ID        int64
	Timestamp int64
	Machine   string
	Service   string
	Severity  int
	Message   string
}

// Field limits of the data model; storage files declare their columns
// with them.
const (
	MaxMachineLen = 30
	MaxServiceLen = 30
	MessageLen    = 255
	MaxSeverity   = 7
	// ErrorSeverity is the highest severity errors_per_host counts (0-3:
	// emergency, alert, critical, error).
	ErrorSeverity = 3
)

// Operation indexes, in the order Workload.Operations returns their names.
const (
	OpWrite = iota
	OpWriteBulk
	OpRead
	OpCountA
	OpCountB
	OpCountC
	OpErrorsPerHost
	OpSearch
	OpFreshnessWrite
	OpFreshness
	numOps
)

// operationNames are the operations' names, indexed by the Op constants.
var operationNames = [numOps]string{
	OpWrite:          "logs.write",
	OpWriteBulk:      "logs.write_bulk",
	OpRead:           "logs.read",
	OpCountA:         "logs.count_a",
	OpCountB:         "logs.count_b",
	OpCountC:         "logs.count_c",
	OpErrorsPerHost:  "logs.errors_per_host",
	OpSearch:         "logs.search",
	OpFreshnessWrite: "logs.freshness_write",
	OpFreshness:      "logs.freshness",
}

// mixNames are the names logs.mix accepts, each choosing one operation
// (freshness runs logs.freshness_write then logs.freshness).
var mixNames = map[string]int{
	"write":           OpWrite,
	"write_bulk":      OpWriteBulk,
	"read":            OpRead,
	"count_a":         OpCountA,
	"count_b":         OpCountB,
	"count_c":         OpCountC,
	"errors_per_host": OpErrorsPerHost,
	"search":          OpSearch,
	"freshness":       OpFreshnessWrite,
}

// OperationNames lists the scenario's operations, as run.json and
// experiment.json name them.
func OperationNames() []string { return append([]string(nil), operationNames[:]...) }
