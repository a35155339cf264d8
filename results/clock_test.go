package results

import "testing"

// TestClockFacts: the kernel answers, and an unsynchronised clock says so.
func TestClockFacts(t *testing.T) {
	c := ClockFacts()
	if c.Source == "" {
		t.Fatal("no source")
	}
	if !c.Synchronised && c.Note == "" {
		t.Errorf("an unsynchronised clock without a note: %+v", c)
	}
	if c.Synchronised && (c.MaxErrorMs < 0 || c.EstErrorMs < 0) {
		t.Errorf("negative error estimates: %+v", c)
	}
	t.Logf("%+v", c)
}
