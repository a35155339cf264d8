package runner

import (
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
	_ "github.com/scalelab/scalelab/scenario/social"
)

// registerScenarios are the scenarios whose updates and deletes the
// register audit reads back, with settings for a short run.
var registerScenarios = []struct {
	scenario string
	sets     []string
}{
	{"ycsb", []string{"ycsb.workload=a", "ycsb.records=500"}},
	{"social", []string{"social.users=2000"}},
}

// A store that silently drops 1 % of acknowledged writes loses updates
// (ycsb) and updates and deletes (social): the audit reads every written
// key back, names the lost ones and fails the run with exit code 1.
func TestAuditLostUpdates(t *testing.T) {
	t.Parallel()
	for _, tc := range registerScenarios {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			doc, code, out := run(t, &Options{Scenario: tc.scenario, Engine: "memory", Ops: 40000, Users: 4, Given: map[string]bool{"users": true},
				Sets: append([]string{"memory.drop_writes=0.01"}, tc.sets...)})
			if doc.Audit == nil || doc.Audit.Registers == nil {
				t.Fatalf("no register audit: %+v\n%s", doc.Audit, out)
			}
			g := doc.Audit.Registers
			if !g.Checked || g.Lost+g.Resurrected == 0 || len(g.Examples) == 0 {
				t.Fatalf("register audit %+v: want lost writes found", g)
			}
			if code != results.ExitCheckFailed || doc.Status != results.StatusFailed {
				t.Errorf("exit %d, status %s; want 1 and failed", code, doc.Status)
			}
			named := false
			for _, f := range doc.Failures {
				named = named || strings.Contains(f, "lost an acknowledged write") && strings.Contains(f, "want v")
			}
			if !named {
				t.Errorf("failures %q do not name the lost updates", doc.Failures)
			}
		})
	}
}

// On a store that loses nothing (SQLite), every updated and deleted key
// reads back as expected: 0 lost, exit 0.
func TestAuditUpdatesSQLite(t *testing.T) {
	t.Parallel()
	for _, tc := range registerScenarios {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			doc, code, out := run(t, &Options{Scenario: tc.scenario, Engine: "sqlite", Ops: 4000, Users: 4, Given: map[string]bool{"users": true}, Sets: tc.sets})
			if doc.Audit == nil || doc.Audit.Registers == nil {
				t.Fatalf("no register audit: %+v\n%s", doc.Audit, out)
			}
			g := doc.Audit.Registers
			if !g.Checked || g.Keys == 0 || g.Lost != 0 || g.Resurrected != 0 || g.ReadBack != max(g.Registers, g.Keys) || (g.Registers > 0 && g.Registers < g.Keys) {
				t.Errorf("register audit %+v: want every key read back, none lost", g)
			}
			if code != results.ExitOK {
				t.Errorf("exit %d (%s %v), want 0", code, doc.Error, doc.Failures)
			}
		})
	}
}
