package engine

import (
	"fmt"
	"os"
)

// Default is the engine of a run that names neither an engine nor a
// cluster, and of an app tier without a store cluster: the embedded
// SQLite, whose store is a file (FileTarget).
const Default = "sqlite"

// FileTarget is an optional capability of an Engine whose store is one
// file on this machine that the target names (SQLite): processes that
// share the store, such as an app tier's servers, share that file, so
// each must be given it.
type FileTarget interface {
	FileTarget() bool
}

// StoreFiler is an optional capability of a FileTarget engine: StoreFile
// returns the path of the file that Open of cfg opens (the target, or a
// file of its own name in the results directory cfg.Dir).
type StoreFiler interface {
	StoreFile(cfg Config) string
}

// AnnouncedAddresses is an optional capability of an Engine whose driver
// reaches a cluster's nodes at the addresses the nodes announce (the
// Cassandra ring), not at the address it was given: a proxy in between
// (a server in a network namespace of its own reaching the cluster
// through routes) cannot route it.
type AnnouncedAddresses interface {
	FollowsAnnouncedAddresses() bool
}

// StatementPool is an optional capability of a Conn to an Embedded
// engine's store (SQLite): its statements run on the load generator's own
// processors and, in file system calls, hold them. Statements returns how
// many its pool runs at once.
type StatementPool interface {
	Statements() int
}

// HasFileTarget reports whether the registered engine name keeps its
// store in a file its target names.
func HasFileTarget(name string) bool { return trait(name, FileTarget.FileTarget) }

// StoreFile returns the file that the registered engine name opens for
// cfg, and false when its store is not a file on this machine.
func StoreFile(name string, cfg Config) (string, bool) {
	e, err := Lookup(name)
	if err != nil {
		return "", false
	}
	sf, ok := e.(StoreFiler)
	if !ok || !HasFileTarget(name) {
		return "", false
	}
	return sf.StoreFile(cfg), true
}

// DataInProcess reports whether the registered engine name keeps the data
// of a run on target only in the memory of the run's process (the memory
// engine): once the process has ended nothing is left to read back. A
// store in a file outlives the process, even one in the results
// directory (SQLite without a target), so it is not in-process here.
func DataInProcess(name, target string) bool {
	if HasFileTarget(name) {
		return false
	}
	return trait(name, func(pl ProcessLocal) bool { return pl.ProcessLocal(target) })
}

// FollowsAnnounced reports whether the registered engine name reaches a
// cluster at the addresses its nodes announce (a proxy cannot route it).
func FollowsAnnounced(name string) bool {
	return trait(name, AnnouncedAddresses.FollowsAnnouncedAddresses)
}

// trait reports whether the registered engine name implements T and says
// yes; an unknown engine has no trait.
func trait[T any](name string, says func(T) bool) bool {
	e, err := Lookup(name)
	if err != nil {
		return false
	}
	t, ok := e.(T)
	return ok && says(t)
}

// ServerTarget is an optional capability of an Engine whose store is a
// server that a run must name: with a target, a cluster, or the
// environment variable the engine reads instead.
type ServerTarget interface {
	// TargetForm is how a target names the server
	// (postgres://user@host:port/db) and the environment variable that
	// may name it instead ("" when there is none).
	TargetForm() (form, env string)
}

// CheckServerNamed refuses a run or serve of the registered engine name
// that names no server: neither a target nor a cluster (hasCluster), nor
// the engine's environment variable. The error wraps ErrConfig and names
// both flags.
func CheckServerNamed(name, target string, hasCluster bool) error {
	e, err := Lookup(name)
	if err != nil || target != "" || hasCluster {
		return nil
	}
	st, ok := e.(ServerTarget)
	if !ok {
		return nil
	}
	form, env := st.TargetForm()
	if env != "" && os.Getenv(env) != "" {
		return nil
	}
	also := ""
	if env != "" {
		also = " (or set " + env + ")"
	}
	return fmt.Errorf("%w: the %s engine's store is a server, and none was named: give --target %s, or --cluster NAME for a local cluster (`scalelab cluster up --help`)%s",
		ErrConfig, name, form, also)
}
