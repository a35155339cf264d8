package social

import (
	"testing"

	"github.com/scalelab/scalelab/engine/enginetest"
	_ "github.com/scalelab/scalelab/engine/enginetest/all"
)

// TestMain stops the servers the engines' test providers started.
func TestMain(m *testing.M) { enginetest.Main(m) }
