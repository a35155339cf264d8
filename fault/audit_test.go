package fault_test

import (
	"testing"

	"github.com/scalelab/scalelab/results"
)

// checkAudit checks that the acknowledged-write audit read every
// acknowledged write back and lost none.
func checkAudit(t *testing.T, r *results.Run) {
	t.Helper()
	a := r.Audit
	if a == nil || !a.Checked || a.Acknowledged == 0 || a.Lost != 0 {
		t.Errorf("audit %+v: want a read-back of the acknowledged writes with 0 lost", a)
		return
	}
	t.Logf("audit: %d attempted, %d acknowledged, %d lost, %d unknown (%d present, %d absent)", a.Attempted, a.Acknowledged, a.Lost, a.Unknown, a.UnknownPresent, a.UnknownAbsent)
}
