// Package all registers the test provider of every engine: a scenario's
// conformance suite imports it and loops over enginetest.Providers().
// memcached has none (memcachedtest): the suites scan and count, which it
// cannot.
package all

import (
	// The server engines' providers (the embedded ones register in
	// enginetest itself).
	_ "github.com/scalelab/scalelab/engine/cassandra/cassandratest"
	_ "github.com/scalelab/scalelab/engine/mongodb/mongotest"
	_ "github.com/scalelab/scalelab/engine/postgres/pgtest"
	_ "github.com/scalelab/scalelab/engine/redis/redistest"
	_ "github.com/scalelab/scalelab/engine/search/searchtest"
	// A test-only engine: the proof that registering an engine with
	// records and a provider is all a scenario's suite needs.
	_ "github.com/scalelab/scalelab/engine/enginetest/throwaway"
)
