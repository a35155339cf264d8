package experiment

import (
	"testing"

	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/slo"
)

// Each tier's CPU per operation, from the runs' telemetry, is a compared
// metric of the totals, lower is better.
func TestTierCPUCompared(t *testing.T) {
	table := func(store float64) slo.Table {
		return slo.Table{slo.AllOps: slo.Figures{slo.Throughput: 100, slo.CPUPerOpPrefix + "store": store, slo.CPUPerOpPrefix + "generator": 20}}
	}
	combos := []CombinationResult{{ID: "c01"}, {ID: "c02", ComparedTo: "c01"}}
	rows := compare(combos, [][]slo.Table{{table(50), table(52), table(51)}, {table(100), table(98), table(101)}})
	var got *Row
	for i := range rows {
		if rows[i].Combination == "c02" && rows[i].Metric == "cpu_per_op_us.store" {
			got = &rows[i]
		}
	}
	if got == nil || got.Unit != "µs/op" || got.HigherIsBetter || got.Verdict != stats.VerdictWorse || got.Op != slo.AllOps {
		t.Fatalf("store CPU per op row %+v", got)
	}
}
