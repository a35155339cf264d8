package experiment

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/slo"
)

// TestBracketTooFewSamples checks that a load whose runs have too few
// samples is neither a pass nor a failure: halving stops there, and a
// start with too few samples doubles.
func TestBracketTooFewSamples(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		sr         Search
		few, limit float64 // loads <= few have too few samples; loads <= limit pass
		lo, hi     float64
		steps      []float64
	}{
		{"halving stops", Search{On: "rate", Start: 100, Max: 1e6, Precision: 0.1}, 20, 0, 0, 25, []float64{100, 50, 25, 13}},
		{"start doubles", Search{On: "rate", Start: 10, Max: 1e6, Precision: 0.1}, 10, 30, 30, 33, []float64{10, 20, 40, 30, 35, 33}},
	} {
		var steps []float64
		lo, hi, err := bracket(tc.sr, func(l float64) (stepVerdict, error) {
			steps = append(steps, l)
			switch {
			case l <= tc.few:
				return stepFewSamples, nil
			case l <= tc.limit:
				return stepMeets, nil
			}
			return stepBreaks, nil
		})
		if err != nil || lo != tc.lo || hi != tc.hi || fmt.Sprint(steps) != fmt.Sprint(tc.steps) {
			t.Errorf("%s: bracket (%v, %v) %v, steps %v; want (%v, %v), steps %v", tc.name, lo, hi, err, steps, tc.lo, tc.hi, tc.steps)
		}
	}
}

// TestTooFewSamplesVerdict checks that a step is "not enough samples" only
// when every failed objective lacks its figure.
func TestTooFewSamplesVerdict(t *testing.T) {
	t.Parallel()
	e, err := slo.Parse("p95<500us")
	if err != nil {
		t.Fatal(err)
	}
	few := slo.Table{"read": {slo.Throughput: 1}}
	out, ok := slo.Check([]slo.Expr{e}, few)
	if ok || !tooFewSamples(out) {
		t.Errorf("undefined p95: %+v", out)
	}
	broke := slo.Table{"read": {slo.Throughput: 1}, "update": {slo.P95: 2}}
	if out, _ := slo.Check([]slo.Expr{e}, broke); tooFewSamples(out) {
		t.Errorf("a p95 over the limit beside an undefined one counted as too few samples: %+v", out)
	}
}

// TestKneeTableColumns checks that the knee table's columns are every
// step's figures, each under its header, also when the steps differ.
func TestKneeTableColumns(t *testing.T) {
	t.Parallel()
	two := stats.Summarize([]float64{2})
	r := &Result{}
	r.SLO = []string{"p95<500us"}
	r.Knees = []Knee{{Combination: "c01", Label: "default", On: "rate", Summary: "s", Steps: []KneeStep{
		{Load: 1, Runs: make([]RunRef, 1), Figures: []StepFigure{{Op: "read", Metric: "p95"}}, TooFewSamples: true},
		{Load: 50, Runs: make([]RunRef, 1), Figures: []StepFigure{{Op: "read", Metric: "p95", Stat: two}, {Op: "update", Metric: "p95", Stat: two}}},
	}}}
	var b bytes.Buffer
	writeKnees(&b, r)
	lines := strings.Split(b.String(), "\n")
	var head, first, second string
	for i, l := range lines {
		if strings.Contains(l, "p95 ms read") {
			head, first, second = l, lines[i+1], lines[i+2]
		}
	}
	if !strings.Contains(head, "p95 ms update") || !strings.Contains(first, "not enough samples") || !strings.Contains(second, "FAIL") {
		t.Fatalf("table:\n%s", b.String())
	}
	at := strings.Index(head, "p95 ms update")
	if first[at:at+1] != "-" || second[at:at+1] != "2" || strings.Index(second, "FAIL") != strings.Index(head, "SLO") {
		t.Errorf("columns do not line up with their headers:\n%s", b.String())
	}
}
