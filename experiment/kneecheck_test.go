package experiment

import (
	"context"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
)

// TestCheckKneeEvaluatesSteps checks that a gate on a knee search's
// results evaluates the objectives against its steps: the highest step
// that meets them is the knee, and when none does the gate fails with
// outcomes (it never passes having evaluated nothing).
func TestCheckKneeEvaluatesSteps(t *testing.T) {
	t.Parallel()
	// memory.latency 2ms: every step's p95 is above 2ms.
	src := ycsbMemory("ycsb.records: 100, memory.latency: 2ms", "users: 1, duration: 300ms", `
slo: p95 < 1s
search: {on: users, start: 1, max: 2, repeats: 1}
`)
	_, out, err := runFile(t, context.Background(), src, Options{})
	if err != nil {
		t.Fatalf("knee: %v", err)
	}
	root := resultsRoot(t, out)
	g, err := CheckDir(root, []string{"p95<1ms"})
	if err != nil || g.Kind != results.KindKnee || len(g.Items) != 1 {
		t.Fatalf("gate %+v %v", g, err)
	}
	it := g.Items[0]
	if g.Pass || it.Pass || len(it.Outcomes) == 0 || it.Outcomes[0].Pass || len(it.Problems) == 0 {
		t.Errorf("p95<1ms passed or evaluated nothing: %+v", g)
	}
	g, err = CheckDir(root, []string{"p95<1s"})
	if err != nil || !g.Pass || len(g.Items[0].Outcomes) == 0 || !strings.Contains(g.Items[0].Detail, "knee: 2 users") {
		t.Errorf("p95<1s: %+v %v", g, err)
	}
	if g, err := CheckDir(root, nil); err != nil || !g.Pass || len(g.Items[0].Outcomes) == 0 {
		t.Errorf("the experiment's own slo: %+v %v", g, err)
	}
}
