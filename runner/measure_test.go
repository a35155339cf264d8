package runner

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestClientQueueInProcess: a phases run of mhealth on SQLite in this
// process runs at most processors-1 statements at once (at least one);
// the others wait in the model's queue, which run.json, the terminal and
// the saturation verdict report.
func TestClientQueueInProcess(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mh.db")
	doc, code, out := run(t, &Options{Scenario: "mhealth", Engine: "sqlite", Target: db, Phases: "2s@300/s", Given: map[string]bool{"phases": true},
		Sets: []string{"mhealth.patients=4", "mhealth.weeks=1", "mhealth.hours_per_week=4", "mhealth.wait_after_write=50ms"}})
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	q := doc.ClientQueue
	if q == nil || !q.InProcess || q.Slots != max(1, runtime.GOMAXPROCS(0)-1) {
		t.Fatalf("client queue %+v: want the store in this process, %d slots\n%s", q, max(1, runtime.GOMAXPROCS(0)-1), out)
	}
	if !strings.Contains(out, "client queue: at most") || !strings.Contains(out, "statements of the store in this process") {
		t.Errorf("terminal summary lacks the client queue:\n%s", out)
	}
	if tl := doc.Telemetry; tl != nil && tl.Saturated == nil && q.MaxWaiting > 0 && !strings.Contains(tl.Saturation, "waited for the client's") {
		t.Errorf("operations waited (%d) but the verdict does not say so: %s", q.MaxWaiting, tl.Saturation)
	}
	if runtime.GOMAXPROCS(0) != procsBefore {
		t.Errorf("GOMAXPROCS %d after the run, was %d", runtime.GOMAXPROCS(0), procsBefore)
	}
}

// procsBefore is GOMAXPROCS as the test binary started.
var procsBefore = runtime.GOMAXPROCS(0)

// TestQueueVerdict words the verdict's addition for one slot and many.
func TestQueueVerdict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		slots, most int
		want        string
	}{
		{1, 7, "the client's one slot (up to 7 at once)"},
		{64, 900, "the client's 64 slots (up to 900 at once)"},
	} {
		if got := queueVerdict(c.slots, c.most); !strings.Contains(got, c.want) {
			t.Errorf("queueVerdict(%d, %d) = %q, want it to contain %q", c.slots, c.most, got, c.want)
		}
	}
}
