package merge

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
)

// TestMergedTelemetryAndRegisters: the merged result of two segments
// (synthetic run.json figures, as ycsb workload a on one shared store of
// 1000 keys writes them) does not show one segment's telemetry as the
// whole's: the terminal's CPU line is scalelab's own CPU summed, and a
// warning says the telemetry is per segment. Its register audit counts the
// keys once (the most of any segment, said to be a lower bound) and does
// not speak of other segments: every register one segment left to
// another is judged by that one.
func TestMergedTelemetryAndRegisters(t *testing.T) {
	t.Parallel()
	seg := func(i int, regs, foreign int64) *shard {
		return &shard{dir: "shard-" + string(rune('0'+i)), run: &results.Run{
			Status:    results.StatusOK,
			Segment:   &results.Segment{Index: i, Count: 2, Host: "h"},
			Process:   &results.Process{CPUUserS: 1, CPUSysS: 0.5, WallS: 3},
			Telemetry: &results.Telemetry{HostCPUs: 2, Tiers: []results.TierUsage{{Tier: "generator", Nodes: 1, CPUMeanCores: 0.5}}},
			Audit: &results.Audit{Checked: true, Registers: &results.RegisterAudit{Keys: 1000, Registers: regs, Writes: 40000, Acknowledged: 40000,
				Checked: true, ReadBack: regs, Foreign: foreign}},
		}}
	}
	use := []*shard{seg(0, 9493, 4318), seg(1, 9481, 4830)}
	doc := newDoc(use, time.Unix(0, 0), 2)
	doc.Totals = &results.Totals{Started: 150000}
	combine(doc, use)
	if doc.Telemetry != nil {
		t.Errorf("merged telemetry %+v: one segment's shown as the whole's", doc.Telemetry)
	}
	if p := doc.Process; p == nil || p.CPUUserS != 2 || p.CPUSysS != 1 {
		t.Fatalf("merged process %+v: want the segments' CPU summed", p)
	}
	g := doc.Audit.Registers
	if g.Keys != 1000 || g.Registers != 9493 || !g.KeysAtLeast || g.Foreign != 0 || g.Writes != 80000 {
		t.Fatalf("merged registers %+v", g)
	}
	var out bytes.Buffer
	report.Terminal(&out, doc)
	report.TerminalAudit(&out, doc)
	text := out.String()
	for _, want := range []string{"cpu: generator 1.00 cores summed over 2 segments", "warning: telemetry: not merged",
		"80000 updates and deletes of at least 9493 registers (fields of at least 1000 keys)"} {
		if !strings.Contains(text, want) {
			t.Errorf("terminal lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "other segments") || strings.Contains(text, "0.50 cores") {
		t.Errorf("terminal speaks of other segments or shows one segment's CPU as the whole's:\n%s", text)
	}
}
