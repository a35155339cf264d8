package report_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scalelab/scalelab/experiment"
	"github.com/scalelab/scalelab/experiment/stats"
	"github.com/scalelab/scalelab/report"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/slo"
)

func ptrF(v float64) *float64 { return &v }
func ptrB(v bool) *bool       { return &v }

// writeResult writes an experiment.Result as experiment.json, with the
// experiment package's own types, so that a renamed or retyped field the
// page reads breaks this test.
func writeResult(t *testing.T, dir string, r *experiment.Result) {
	t.Helper()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.ExperimentFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// matrixResult is a two-factor matrix (users x a label carrying markup)
// with real run directories for c01 and c02.
func matrixResult(t *testing.T, dir, hostile string) *experiment.Result {
	t.Helper()
	var runs [][]experiment.RunRef
	for c := 1; c <= 4; c++ {
		var rr []experiment.RunRef
		for rep := 1; rep <= 2; rep++ {
			rd := filepath.Join("runs", "c0"+string(rune('0'+c))+"-r0"+string(rune('0'+rep)))
			if c <= 2 {
				scalelab(t, "run", "ycsb", "--engine", "null", "--ops", "3000", "--users", "2", "--out", filepath.Join(dir, rd), "--progress", "off")
			}
			rr = append(rr, experiment.RunRef{Repeat: rep, Dir: rd, Seed: uint64(rep), Status: "ok", Measured: true, Start: time.Now(), Seconds: 1, ThroughputPerS: 1000})
		}
		runs = append(runs, rr)
	}
	runs[3][1].Dir = "javascript:alert(1)"
	combo := func(i int, users, label string) experiment.CombinationResult {
		id := "c0" + string(rune('1'+i))
		return experiment.CombinationResult{ID: id, Label: "users=" + users + " mode=" + label,
			Levels: []experiment.LevelRef{{Factor: "users", Level: users}, {Factor: "scenario.mode", Level: label}},
			Engine: "memory", Settings: []string{"memory.latency=1ms"}, Baseline: i == 0, ComparedTo: "c01", Runs: runs[i],
			SLO:     []slo.Outcome{{SLO: "p99 < 5ms for read", Op: "read", Metric: "p99", Value: ptrF(4), Limit: 5, Pass: i != 3, Detail: "p99 of read: 4ms < 5ms"}},
			SLOPass: ptrB(i != 3)}
	}
	stat := func(mean float64) experiment.Stat {
		return experiment.Stat{N: 2, Mean: mean, SD: mean / 10, CILow: ptrF(mean * 0.8), CIHigh: ptrF(mean * 1.2), CIHalfPct: ptrF(20)}
	}
	r := &experiment.Result{Schema: results.ExperimentSchema, Kind: results.KindMatrix, Name: "matrix " + hostile, Description: hostile,
		File: "m.yaml", Scenario: "ycsb", Status: "failed", ExitCode: 1, Error: hostile, Failures: []string{"c04: " + hostile},
		Notes: []string{"runs are interleaved"}, Order: "interleaved", Repeats: experiment.RepeatRule{Fixed: 2},
		Factors:  []experiment.FactorInfo{{Name: "users", Levels: []string{"2", "8"}}, {Name: "scenario.mode", Levels: []string{"a", hostile}}},
		Baseline: "c01", BaselineRule: "c01 users=2 mode=a", SLO: []string{"p99 < 5ms for read"}, Confidence: 0.95,
		Combinations: []experiment.CombinationResult{combo(0, "2", "a"), combo(1, "8", "a"), combo(2, "2", hostile), combo(3, "8", hostile)},
		Totals:       experiment.ResultTotals{Runs: 8, Measured: 8, Seconds: 9}, Start: time.Now()}
	verdicts := []string{stats.VerdictBaseline, stats.VerdictBetter, stats.VerdictNoDifference, stats.VerdictWorse}
	for i, c := range r.Combinations {
		for _, m := range []struct {
			op, metric, unit string
			mean             float64
		}{{slo.AllOps, slo.Throughput, "ops/s", 1000 * float64(i+1)}, {slo.AllOps, slo.ErrorRate, "fraction", 0.01}, {"read", slo.P99, "ms", 2 + float64(i)}, {"read", slo.P95, "ms", 1.5}} {
			row := experiment.Row{Combination: c.ID, Label: c.Label, Op: m.op, Metric: m.metric, Unit: m.unit, Values: []float64{m.mean, m.mean},
				Stat: stat(m.mean), Baseline: i == 0, ComparedTo: "c01", Verdict: verdicts[i]}
			if i > 0 {
				row.BaselineMean, row.Delta, row.DeltaPct, row.PValue = ptrF(1), ptrF(1), ptrF(12.5), ptrF(0.0004)
			}
			r.Comparison = append(r.Comparison, row)
		}
	}
	return r
}

func TestExperimentPageMatrix(t *testing.T) {
	t.Parallel()
	const hostile = `</script><img src=x onerror=alert(1)>`
	dir := t.TempDir()
	writeResult(t, dir, matrixResult(t, dir, hostile))
	path, err := report.WriteExperiment(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	page := string(b)
	for _, w := range []string{
		"Combinations", "c01 (baseline)", "FAIL: p99 of read", "Comparison with the baseline", "(all): throughput (ops/s)",
		"read: p99 latency (ms)", "SLO p99 &lt; 5ms for read", "Scaling curves", "(all): throughput (ops/s) against users",
		"read: p99 latency (ms) against users", "mode=a", "Latency percentile spectra", "read: latency by percentile",
		"Comparison tables", "no significant difference", "&lt;0.001", "&#43;12.5%", `href="runs/c01-r01/report.html"`,
		"95% intervals", "2 per combination",
	} {
		if !strings.Contains(page, w) {
			t.Errorf("experiment page lacks %q", w)
		}
	}
	for _, raw := range []string{"<img", "</script>", `href="javascript:`} {
		if strings.Contains(page, raw) {
			t.Errorf("experiment page holds %q unescaped", raw)
		}
	}
	if n := strings.Count(page, "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"); n < 6 {
		t.Errorf("the hostile string appears escaped %d times", n)
	}
	if m := regexp.MustCompile(`<[^>]*\s(src|srcset|action)=`).FindString(page); m != "" {
		t.Errorf("the page loads something: %q", m)
	}
}

func TestExperimentPageKnee(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	step := func(load float64, order int, pass bool, p95 float64) experiment.KneeStep {
		return experiment.KneeStep{Load: load, Order: order, Pass: pass,
			Runs:       []experiment.RunRef{{Repeat: 1, Load: load, Dir: "runs/c01-rate" + strings.TrimSuffix(strings.TrimSuffix(jsonNum(load), ".0"), ".") + "-r01", Status: "ok", Measured: true}},
			Throughput: experiment.Stat{N: 2, Mean: load * 0.99, CILow: ptrF(load * 0.97), CIHigh: ptrF(load)},
			Figures:    []experiment.StepFigure{{Op: "read", Metric: slo.P95, Stat: experiment.Stat{N: 2, Mean: p95, CILow: ptrF(p95 * 0.5), CIHigh: ptrF(p95 * 1.5)}}},
			Outcomes:   []slo.Outcome{{SLO: "p95 < 10ms for read", Op: "read", Metric: slo.P95, Value: ptrF(p95), Limit: 10, Pass: pass}},
		}
	}
	k := experiment.Knee{Combination: "c01", Label: "engine=memory", On: "rate", Start: 1000, Max: 64000, Precision: 0.1, Repeats: 2,
		Load: ptrF(4000), Broke: ptrF(8000), Summary: "the SLO holds up to 4000 ops/s and breaks at 8000 ops/s",
		Steps: []experiment.KneeStep{step(1000, 1, true, 1), step(2000, 2, true, 2), step(4000, 3, true, 6), step(8000, 4, false, 40)}}
	r := &experiment.Result{Schema: results.ExperimentSchema, Kind: results.KindKnee, Name: "knee", Scenario: "ycsb", Status: "ok",
		Confidence: 0.95, Knees: []experiment.Knee{k},
		Combinations: []experiment.CombinationResult{{ID: "c01", Label: "engine=memory", Engine: "memory", Baseline: true}}}
	writeResult(t, dir, r)
	out := filepath.Join(t.TempDir(), "knee.html")
	if _, err := report.WriteExperiment(dir, out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	page := string(b)
	for _, w := range []string{"Knee: c01 engine=memory", "the SLO holds up to 4000 ops/s", "read p95 against offered rate (ops/s)",
		"SLO p95 &lt; 10ms for read", ">knee<", "throughput against offered rate", "offered rate", "FAIL", "pass", "8000"} {
		if !strings.Contains(page, w) {
			t.Errorf("knee page lacks %q", w)
		}
	}
	if _, err := report.WriteExperiment(t.TempDir(), ""); err == nil {
		t.Error("no error for a directory without experiment.json")
	}
}

func jsonNum(v float64) string {
	b, _ := json.Marshal(v)
	return string(b)
}
