package memory

import (
	"testing"

	"github.com/scalelab/scalelab/engine/recordstest"
)

func TestRecords(t *testing.T) { recordstest.RunConn(t, New(Faults{})) }
