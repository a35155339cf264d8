package mhealth

import (
	"testing"

	"github.com/scalelab/scalelab/engine/mongodb"
)

// TestConformanceMongoDB runs the suite in both layouts of the study's
// MongoDB backend: one shared activity collection with upserts on the
// natural id, and one collection per patient; and with generated ids.
func TestConformanceMongoDB(t *testing.T) {
	t.Parallel()
	t.Run("shared", func(t *testing.T) { t.Parallel(); conformance(t, mongodb.Name) })
	t.Run("per_user", func(t *testing.T) {
		t.Parallel()
		conformance(t, mongodb.Name, mongodb.KeyLayout+"="+mongodb.LayoutPerUser)
	})
	t.Run("generated_ids", func(t *testing.T) {
		t.Parallel()
		conformance(t, mongodb.Name, mongodb.KeyNaturalIDs+"=false")
	})
}
