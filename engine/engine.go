// Package engine holds the Engine contract that every data store implements,
// the registry engines add themselves to, and the sentinel errors scenarios
// and engines share.
package engine

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/registry"
	"github.com/scalelab/scalelab/setting"
)

// Engine is a kind of data store. Implementations register themselves with
// Register from an init function.
type Engine interface {
	// Name is the registry name, e.g. "sqlite".
	Name() string
	// Description is one line for `scalelab list`.
	Description() string
	// Settings declares the engine's settings; every key starts with Name()+".".
	Settings() []setting.Spec
	// Open connects to the store described by cfg.
	Open(ctx context.Context, cfg Config) (Conn, error)
}

// Config is what Open needs: the target, the resolved settings and the
// results directory (where embedded engines keep their files by default).
type Config struct {
	Target   string         // --target; "" means the engine's default
	Settings *setting.Set   // resolved settings (engine and scenario keys)
	Dir      string         // the run's results directory
	Cluster  *cluster.State // set with --cluster: a local cluster scalelab started
	Scenario string         // the scenario the run opens, named in the marks on what it creates (Mark)
	Run      string         // the run's name (its results directory's), named in those marks
}

// Conn is an open connection to a store. Scenarios use its optional
// capabilities (Records, Classifier) or, where their queries need an
// engine's own API, type-assert it to the engine's concrete type in a
// storage file of theirs.
type Conn interface {
	// Info describes the server for run.json. It must not contain secrets.
	Info(ctx context.Context) (Info, error)
	// Close releases the connection.
	Close() error
}

// TargetChecker is an optional capability of an Engine: it checks the form
// of a --target (its syntax, and that it holds no credentials) without
// connecting, so that a bad target is a usage error found before a run
// creates anything. Open applies the same checks; an engine without it has
// its target checked only when Open connects.
type TargetChecker interface {
	// CheckTarget returns an error wrapping ErrConfig for a target that
	// Open would refuse as malformed; the error never echoes a secret. An
	// empty target is a run given neither a target nor a cluster: refused
	// ("no server given") when Open would refuse it, accepted when the
	// engine finds its store without one (a default address, the
	// environment, an embedded store).
	CheckTarget(target string) error
}

// Info describes a connected store.
type Info struct {
	Engine  string            `json:"engine"`
	Version string            `json:"version"`
	Target  string            `json:"target"` // redacted: no password
	Extra   map[string]string `json:"extra,omitempty"`
	// Product names the server measured when it is not what the engine's
	// name says (FerretDB behind the mongodb engine); results show it
	// wherever they name the engine.
	Product string `json:"product,omitempty"`
}

// ProcessLocal is an optional capability of an Engine whose data, for the
// given target, lives in the scalelab process or its results directory
// (the memory engine; SQLite without a target): the segments of a divided
// test, each its own process, cannot share it.
type ProcessLocal interface {
	ProcessLocal(target string) bool
}

// Embedded is an optional capability of an Engine whose store runs inside
// the scalelab process (SQLite, memory, null): its CPU and memory are
// scalelab's own, so telemetry counts them in the generator's.
type Embedded interface {
	Embedded() bool
}

// AfterRunner is an optional capability of a Conn: facts about the server
// measured once the run has ended (requests per router, data
// distribution), recorded in run.json beside Info.
type AfterRunner interface {
	AfterRun(ctx context.Context) map[string]string
}

// StatsSampler is an optional capability of a Conn: what the server says
// about itself (commits, cache hits, thread-pool queues and rejections,
// connections), sampled every few seconds during a run so that a report can
// show which tier saturated. Names are short and stable, prefixed by their
// source ("pg.xact_commit", "os.node1.thread_pool.write.rejected");
// counters are cumulative (the telemetry derives rates and deltas), gauges
// are values now. An error never fails a run: it is recorded.
type StatsSampler interface {
	SampleStats(ctx context.Context) (map[string]float64, error)
}

// Sentinel errors shared by engines and scenarios. Each carries its class.
var (
	// ErrNotFound means a record that should exist was not found.
	ErrNotFound = metrics.WithClass(metrics.NotFound, errors.New("not found"))
	// ErrIntegrity means a store returned wrong data (a failed verification).
	ErrIntegrity = metrics.WithClass(metrics.Integrity, errors.New("integrity check failed"))
	// ErrUnreachable means the store could not be reached at all.
	ErrUnreachable = errors.New("engine unreachable")
	// ErrConfig means the engine's configuration (the target, a setting) is
	// invalid: a usage error (exit code 2), not a failure of the store.
	ErrConfig = errors.New("invalid engine configuration")
)

var engines = registry.New[Engine]("engine")

// Register makes an engine available by name. It panics on a nil engine or
// a duplicate name, like database/sql.Register.
func Register(e Engine) {
	if e == nil {
		panic("engine: Register of nil engine")
	}
	engines.Register(e.Name(), e)
}

// Lookup returns the engine registered under name; the error names the
// nearest registered engine.
func Lookup(name string) (Engine, error) { return engines.Lookup(name) }

// Names returns the registered engine names, sorted.
func Names() []string { return engines.Names() }

// Credentials resolves a server engine's target and password from cfg:
// the target is cfg.Target, else the --cluster's; the password comes from
// passwordFile (a 0600 file named by the engine's setting, key names it in
// errors), else the cluster's secret file, else the environment variable
// env. A password never comes from a flag or the target.
func Credentials(cfg Config, key, passwordFile, env string) (target, password string, err error) {
	target = cfg.Target
	if cfg.Cluster != nil {
		if target == "" {
			target = cfg.Cluster.Target
		}
		if password, err = cfg.Cluster.Password(); err != nil {
			return "", "", fmt.Errorf("cluster %s: %w", cfg.Cluster.Name, err)
		}
	}
	if passwordFile != "" {
		if password, err = cluster.ReadSecret(passwordFile); err != nil {
			return "", "", fmt.Errorf("%w: %s: %w", ErrConfig, key, err)
		}
	} else if pw, ok := os.LookupEnv(env); ok && password == "" {
		password = pw
	}
	return target, password, nil
}
