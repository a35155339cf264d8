package engine_test

import (
	"slices"
	"testing"

	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/engine/enginetest/throwawaycache"
	"github.com/scalelab/scalelab/engine/memcached"
	"github.com/scalelab/scalelab/engine/sqlite"
)

// TestWithRecordsAndCache: each list names the engines that state the
// capability, and only them, sorted.
func TestWithRecordsAndCache(t *testing.T) {
	records, cache := engine.WithRecords(), engine.WithCache()
	if !slices.Contains(records, sqlite.Name) || !slices.Contains(records, memcached.Name) || slices.Contains(records, throwawaycache.Name) {
		t.Errorf("WithRecords() = %v", records)
	}
	if !slices.Contains(cache, memcached.Name) || !slices.Contains(cache, throwawaycache.Name) || slices.Contains(cache, sqlite.Name) {
		t.Errorf("WithCache() = %v", cache)
	}
	if !slices.IsSorted(records) || !slices.IsSorted(cache) {
		t.Errorf("not sorted: %v, %v", records, cache)
	}
}
