package runner

import (
	"bytes"
	"context"
	"strings"
	"testing"

	_ "github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestReauditOverwrittenSince: `scalelab audit DIR` of a run whose keys a
// later run updated again counts them "overwritten since the run: not
// judged" (they hold versions later than any the run wrote), not lost,
// and leaves the run's verdict as it was.
func TestReauditOverwrittenSince(t *testing.T) {
	t.Parallel()
	f := newYCSBFile(t, 100)
	runOpts := Options{Users: 2, Given: map[string]bool{"users": true}, Ops: 3000, Sets: []string{"ycsb.workload=a", "ycsb.load=false"}}
	runOpts.Args = []string{"scalelab", "run", "ycsb", "--engine", "sqlite", "--target", f.db}
	first := f.run(t, "first", runOpts)
	if g := first.Audit.Registers; g == nil || !g.Checked || g.Lost != 0 || g.Overwritten != 0 {
		t.Fatalf("first run's own audit: %+v", g)
	}
	f.run(t, "second", runOpts) // the same keys, updated again later
	dir := f.dir("first")
	r := resultstest.Read(t, dir)
	var stderr bytes.Buffer
	if err := Reaudit(context.Background(), dir, r, &stderr); err != nil {
		t.Fatalf("reaudit: %v\n%s", err, stderr.String())
	}
	g := r.Audit.Registers
	if g == nil || !g.Checked || g.Lost != 0 || g.Resurrected != 0 || g.Overwritten == 0 || len(r.Failures) != 0 {
		t.Fatalf("reaudit after a later run: %+v, failures %v: want none lost, some overwritten since", g, r.Failures)
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "re-run by") {
			t.Errorf("verdict noted as changed: %s", w)
		}
	}
	var out bytes.Buffer
	report.TerminalAudit(&out, r)
	if !strings.Contains(out.String(), "overwritten since the run: not judged") {
		t.Errorf("audit line %q does not say what was overwritten", out.String())
	}
}
