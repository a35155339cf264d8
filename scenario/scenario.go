// Package scenario holds the Scenario contract (an application workload:
// data model, deterministic generator, operations and sessions) and the
// registry scenarios add themselves to.
package scenario

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/registry"
	"github.com/scalelab/scalelab/segment"
	"github.com/scalelab/scalelab/setting"
)

// Scenario is an application workload. Implementations register themselves
// with Register from an init function.
type Scenario interface {
	// Name is the registry name, e.g. "ycsb".
	Name() string
	// Description is one line for `scalelab list`.
	Description() string
	// Settings declares the scenario's settings; keys start with Name()+".".
	Settings() []setting.Spec
	// Engines lists the engines this scenario runs on (for scenarios built
	// on engine.Records: every engine with that capability).
	Engines() []string
	// Open prepares the scenario on a connected engine (creating its schema)
	// and returns the workload. It does not load data; Workload.Load does.
	Open(ctx context.Context, env Env) (Workload, error)
}

// Env is what a scenario gets to open a workload: the store's connection
// (the store tier) and the connections of the run's other tiers by role.
type Env struct {
	Engine   string       // the store's engine name
	Conn     engine.Conn  // the store: engine.Records, or type-asserted in a storage file
	Settings *setting.Set // resolved settings (scenario and store engine keys)
	Seed     uint64       // run seed: data and choices derive from it
	// Tiers are the run's other connections by role (a cache, ...): only
	// roles the scenario declares (TierUser) are ever present.
	Tiers map[string]Tier
	// Segment is the share of the test this process runs (--segment):
	// keys the workload creates during the run come from the segment's
	// own range (segment.Segment.Key), so that segments never collide.
	Segment segment.Segment
	// ReadBackOnly opens the workload only to read a finished run's writes
	// back (`scalelab audit DIR`, with SCENARIO.load=false): Open must not
	// create, drop, delete or load anything.
	ReadBackOnly bool
}

// Tier is a connection of a run beside the store, in a role.
type Tier struct {
	Engine   string       // engine name
	Conn     engine.Conn  // open connection
	Settings *setting.Set // the engine's resolved settings (its own keys)
}

// Tier returns the connection of role, if the run has one.
func (e Env) Tier(role string) (Tier, bool) {
	t, ok := e.Tiers[role]
	return t, ok
}

// Roles of tiers beside the store.
const (
	// RoleStore is the store itself, the tier every run has.
	RoleStore = "store"
	// RoleCache is a cache in front of the store.
	RoleCache = "cache"
	// RoleApp is the app tier: a web scenario's servers behind a balancer,
	// which the load generator drives over HTTP (run --cluster APP).
	RoleApp = "app"
)

// TierSpec is a tier a scenario can use: its role and what the scenario
// does with it, for `scalelab list` and errors.
type TierSpec struct {
	Role        string
	Description string
}

// TierUser is an optional capability of a Scenario that uses tiers beside
// the store (a cache in front of it, ...); a run that names a tier the
// scenario does not declare is a usage error.
type TierUser interface {
	Tiers() []TierSpec
}

// Operator is an optional capability of a Scenario: the names of the
// operations its workloads run (what Workload.Operations returns), known
// without opening one, so that an SLO on an operation the scenario does
// not have is refused before anything runs.
type Operator interface {
	Operations() []string
}

// Workload is an opened scenario, ready to load data and start sessions.
type Workload interface {
	// Operations names the operations, `area.verb` style; an operation's
	// index in this slice is its id in Session.Next.
	Operations() []string
	// LoadSize is the number of items Load will write (0: nothing to load).
	LoadSize() int64
	// Load writes the initial data with the given parallelism, calling
	// progress with the number of items written since the last call.
	Load(ctx context.Context, workers int, progress func(n int64)) error
	// NewSession returns a session; id is unique within the run and seed
	// derives from the run seed and id. A session is used by one goroutine
	// at a time, not always the same one: the phases model resumes a
	// waiting session on whichever of its runners is free (docs/load-models.md).
	NewSession(id uint64, seed uint64) Session
	// Close releases resources held by the workload (not the connection).
	Close() error
}

// Session is one virtual user's (or one arriving user's) sequence of
// operations. The load model calls Next (untimed: choose the operation and
// its arguments), waits the think time, then calls Do (timed).
type Session interface {
	// Next prepares the next operation and returns its index in
	// Workload.Operations, or ok=false when the session has ended.
	Next() (op int, ok bool)
	// Do executes the prepared operation.
	Do(ctx context.Context) error
}

// Thinker is an optional capability of a Session: a session that prescribes
// its own think time before the operation Next just prepared (as a web user
// waits longer before posting a form). Without it, the load model's --think
// distribution applies.
type Thinker interface {
	// Think returns the pause before the prepared operation; ok=false falls
	// back to the load model's think time.
	Think() (d time.Duration, ok bool)
}

// Limited is an optional capability of a Workload whose operations run at
// most Inflight at once (the connections of the client it drives: its
// pool to the store, or to the app tier): an operation due while all are
// busy would wait inside Do for one. The phases model starts it at its
// due time (its schedule lag is that start) and keeps it waiting in a
// queue of its own, without a goroutine, until one is free; the wait is
// in its latency. n <= 0 means no bound. inProcess says that the
// operations run in this process (an engine.StatementPool): the model
// then also keeps processors for itself (docs/load-models.md).
type Limited interface {
	Inflight() (n int, inProcess bool)
}

// Checker is an optional capability of a Workload: checks run after the
// load ends (for example, reading back what was written). A returned error
// wrapping engine.ErrIntegrity fails the run with exit code 1.
type Checker interface {
	Check(ctx context.Context) error
}

// Reporter is an optional capability of a Workload: figures the scenario
// measured beyond operation latencies (stale reads, freshness delays and
// polls, ...), keyed by name. The runner writes them to run.json under
// "scenario_report" after the load ends; values must encode as JSON.
type Reporter interface {
	Report() map[string]any
}

// MeasureStarter is an optional capability of a Workload that counts by
// time (a web scenario's responses per second): the runner tells it when
// the load began, t = 0 of series.csv and of the report's charts over
// time, before the first session starts.
type MeasureStarter interface {
	MeasureStarted(t time.Time)
}

// WriteLog receives, from inside Session.Do, the items an operation is
// about to write, before it sends them: the runner's acknowledged-write
// audit implements it and records the write's outcome when Do returns
// (docs/audit.md). An item id is unique within the run and names what
// Workload.ReadBack checks; a write of n items names first..first+n-1.
type WriteLog interface {
	Writing(first int64, n int)
}

// Audited is an optional capability of a Session whose Do writes items
// that can be read back by id: the runner hands it a WriteLog before the
// first Next, and the session calls Writing before each write it sends. A
// session without it is not audited.
type Audited interface {
	SetWriteLog(l WriteLog)
}

// ReadBacker is an optional capability of a Workload whose sessions are
// Audited (the runner audits a run only then): after the run it reports
// which of the given item ids the store holds (present[i] for ids[i]),
// reading from the primary where there are replicas. It is called
// concurrently with batches of a few hundred ids.
// Called with no ids, it returns errors.ErrUnsupported when the engine's
// storage cannot read back (then the writes are logged but not read back),
// else nil.
type ReadBacker interface {
	ReadBack(ctx context.Context, ids []int64, present []bool) error
}

// RegisterLog is an optional capability of a WriteLog (the runner's audit
// log has it): updates and deletes of registers, keys whose value a
// session overwrites in place. The session calls Updating inside Do,
// before it sends the write, and stores the returned version (positive,
// unique within the run and greater than any an earlier run handed out)
// with the value, so that the read-back after the
// run can tell which write a register holds (docs/audit.md).
type RegisterLog interface {
	Updating(key int64, del bool) (version int64)
	// Inserting logs the creation of a key that did not exist before (so
	// that its absence is its value from before the run).
	Inserting(key int64) (version int64)
	// NotApplied says the register writes the operation logged so far
	// were refused by the store (known not applied) although the
	// operation itself succeeded, as a conditional write that found its
	// condition already false does; Do then returns nil.
	NotApplied()
}

// RegisterReader is an optional capability of a Workload whose sessions
// log register writes: after the run it reports the version each register
// holds (versions[i] for keys[i]): the version a logged write stored, 0
// for the value from before the run (loaded or inserted, which carries no
// version), or -1 when the store does not hold the key. It reads from the
// primary where there are replicas and is called concurrently with batches
// of a few hundred keys.
type RegisterReader interface {
	ReadVersions(ctx context.Context, keys []int64, versions []int64) error
}

// RegisterKeyer is an optional capability of a RegisterReader whose
// registers are parts of keys (ycsb: every field of a record is a
// register): the key a register is part of, so that the audit counts keys
// as keys.
type RegisterKeyer interface {
	RegisterKey(register int64) int64
}

// Server is an optional capability of a Scenario that is a web
// application: the HTTP handler of its backend on an opened engine (what
// `scalelab serve` runs; a run without records.app-style URL runs the same
// handler in its own process).
type Server interface {
	Handler(ctx context.Context, env Env) (http.Handler, error)
}

// ErrEngineNotSupported is returned by Open for an engine without a storage
// file in the scenario.
var ErrEngineNotSupported = errors.New("engine not supported by scenario")

var scenarios = registry.New[Scenario]("scenario")

// Register makes a scenario available by name. It panics on nil or a
// duplicate name.
func Register(s Scenario) {
	if s == nil {
		panic("scenario: Register of nil scenario")
	}
	scenarios.Register(s.Name(), s)
}

// Lookup returns the scenario registered under name; the error lists the
// scenarios and names the nearest one.
func Lookup(name string) (Scenario, error) { return scenarios.Lookup(name) }

// Names returns the registered scenario names, sorted.
func Names() []string { return scenarios.Names() }

// Declares reports whether s has the setting key (its own, such as
// records.eager, or one it shares, such as cache.mode).
func Declares(s Scenario, key string) bool {
	for _, sp := range s.Settings() {
		if sp.Key == key {
			return true
		}
	}
	return false
}

// Supports reports whether s runs on engine.
func Supports(s Scenario, engineName string) bool {
	for _, e := range s.Engines() {
		if e == engineName {
			return true
		}
	}
	return false
}
