package cassandra_test

import (
	"context"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/engine/cassandra"
)

// sumStat adds a figure over every node ("mutationstage.completed").
func sumStat(t *testing.T, m map[string]float64, suffix string) (sum float64, nodes int) {
	t.Helper()
	for k, v := range m {
		if strings.HasSuffix(k, "."+suffix) {
			sum += v
			nodes++
		}
	}
	return sum, nodes
}

// statsAround samples the ring's thread pools before and after f: every
// node answers for itself, and the mutations f makes show in the
// MutationStage's completed tasks.
func statsAround(ctx context.Context, t *testing.T, c *cassandra.Conn, nodes int, f func()) {
	t.Helper()
	before, err := c.SampleStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f()
	after, err := c.SampleStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, n := sumStat(t, before, "mutationstage.completed")
	a, _ := sumStat(t, after, "mutationstage.completed")
	if n != nodes || a <= b {
		t.Errorf("MutationStage completed on %d nodes (want %d): %g before, %g after", n, nodes, b, a)
	}
	for _, addr := range []string{"127_0_0_1", "127_0_0_2", "127_0_0_3"}[:nodes] {
		if _, ok := after["cass."+addr+".readstage.pending"]; !ok {
			t.Errorf("no ReadStage of %s in %v", addr, after)
		}
	}
}
