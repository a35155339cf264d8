package report

import (
	"math"
	"testing"
)

// TestPathIsolatedPoints: runs of one point between gaps are kept apart as
// dots, not written as zero-length path data.
func TestPathIsolatedPoints(t *testing.T) {
	t.Parallel()
	nan := math.NaN
	var p pathBuilder
	for _, pt := range [][2]float64{{1, 1}, {2, nan()}, {3, 3}, {4, 4}, {5, nan()}, {6, 6}} {
		p.point(pt[0], pt[1])
	}
	if d := p.String(); d != "M3,3L4,4" {
		t.Fatalf("path %q", d)
	}
	if len(p.isolated) != 2 || p.isolated[0] != [2]float64{1, 1} || p.isolated[1] != [2]float64{6, 6} {
		t.Fatalf("isolated %v", p.isolated)
	}
}
