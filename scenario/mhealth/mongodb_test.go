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
	conformanceVariants(t, mongodb.Name, variant{"shared", nil},
		variant{"per_user", []string{mongodb.KeyLayout + "=" + mongodb.LayoutPerUser}},
		variant{"generated_ids", []string{mongodb.KeyNaturalIDs + "=false"}})
}
