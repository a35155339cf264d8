package engine

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
