package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/promsource/promtest"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
)

// TestAppNotListening: `run mhealth|records --app URL` with nothing
// listening there stops before the load, as an unreachable engine does
// (exit 4 at once), instead of failing every operation for the duration.
func TestAppNotListening(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	for _, scen := range []string{"mhealth", "records"} {
		addr := promtest.FreeAddr(t) // closed again: nothing listens there
		dir := filepath.Join(t.TempDir(), scen)
		start := time.Now()
		code, _, errs := run(t, context.Background(), "run", scen, "--target", filepath.Join(t.TempDir(), "s.db"),
			"--app", "http://"+addr, "--duration", "60s", "--users", "2", "--out", dir, "--progress", "off")
		took := time.Since(start)
		if code != ExitUnfinished {
			t.Errorf("%s: exit %d, want %d: %s", scen, code, ExitUnfinished, errs)
		}
		if took > 30*time.Second {
			t.Errorf("%s: took %s for a 60 s run against nothing: not checked before the load", scen, took)
		}
		for _, want := range []string{scen + ".app http://" + addr + " (--app)", "application unreachable", "start the"} {
			if !strings.Contains(errs, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", scen, want, errs)
			}
		}
		r := resultstest.Read(t, dir)
		if r.Status != results.StatusFailed || r.Totals != nil {
			t.Errorf("%s: status %s, totals %+v: the load ran", scen, r.Status, r.Totals)
		}
	}
}
