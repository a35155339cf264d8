package study

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/results"
)

// writeJSON writes v as JSON to dir/name.
func writeJSON(t *testing.T, dir, name string, v any) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// synthStudy writes a study directory by hand: one experiment with
// factor servers (1, 2), throughput values per combination and, for the
// 2-server runs, the saturation telemetry found.
func synthStudy(t *testing.T, one, two []float64, sat *results.Saturated, f Finding) string {
	t.Helper()
	var tel *results.Telemetry
	if sat != nil {
		tel = &results.Telemetry{Saturated: sat}
	}
	return synthStudyTel(t, one, two, nil, tel, f)
}

// synthStudyTel is synthStudy with each side's runs' telemetry given
// (nil: none).
func synthStudyTel(t *testing.T, one, two []float64, telOne, telTwo *results.Telemetry, f Finding) string {
	t.Helper()
	dir := t.TempDir()
	st := Study{ID: "901", Name: "synth", Title: "T", Question: "Q", Setup: "S",
		Experiments: []Experiment{{Name: "e", Example: "e.yaml", Profiles: map[string]string{"quick": "", "full": ""}}}, Findings: []Finding{f}}
	writeJSON(t, dir, RecordFile, Record{Schema: 1, Study: st, Profile: "quick", Status: "ok", Host: results.Host{CPUs: 2},
		Experiments: []RunExperiment{{Name: "e", File: "examples/e.yaml", Dir: "e", Status: "ok"}}})
	ex := results.Experiment{Factors: []results.FactorInfo{{Name: "servers", Levels: []string{"1", "2"}}}}
	for i, vals := range [][]float64{one, two} {
		id, level := "c0"+string(rune('1'+i)), string(rune('1'+i))
		c := results.CombinationResult{ID: id, Label: "servers=" + level, Levels: []results.LevelRef{{Factor: "servers", Level: level}}}
		for r := range vals {
			rd := filepath.Join("runs", id, "r"+string(rune('1'+r)))
			c.Runs = append(c.Runs, results.RunRef{Repeat: r + 1, Dir: rd, Measured: true})
			run := results.Run{Engine: "postgres", Server: &results.Server{Version: "15.1"}}
			run.Telemetry = []*results.Telemetry{telOne, telTwo}[i]
			writeJSON(t, filepath.Join(dir, "e", rd), results.RunFile, run)
		}
		ex.Combinations = append(ex.Combinations, c)
		ex.Comparison = append(ex.Comparison, results.Row{Combination: id, Op: "(all)", Metric: "throughput", Unit: "ops/s", Values: vals, Stat: results.Stat{N: len(vals), Mean: mean(vals)}})
	}
	writeJSON(t, filepath.Join(dir, "e"), results.ExperimentFile, ex)
	return dir
}

// TestBuildTopologyAndDisagreement: a topology row whose host saturated
// is not reproducible here and says so, as is a row whose one side alone
// ran on a saturated host; a disagreement carries what the
// data shows (the ratios and the saturated tier); the page names the
// store's version.
func TestBuildTopologyAndDisagreement(t *testing.T) {
	t.Parallel()
	one, two := []float64{100, 102, 98}, []float64{150, 152, 149}
	row := Finding{ID: "servers", Finding: "2 servers faster", Setup: "s", Source: "Table 9", About: "2 servers / 1", Expect: Higher, Large: true,
		Published: []Published{{Label: "2", Value: 200, Unit: "ops/s"}, {Label: "1", Value: 100, Unit: "ops/s"}},
		Measure:   &Selector{Experiment: "e", Levels: map[string]string{"servers": "2"}, Op: "(all)", Metric: "throughput"},
		Reference: &Selector{Levels: map[string]string{"servers": "1"}}}
	host := &results.Saturated{Tier: "host", Node: "cpu", Resource: "host"}

	topo := row
	topo.Topology = true
	p, err := Build(synthStudy(t, one, two, host, topo))
	if err != nil {
		t.Fatal(err)
	}
	if o := p.Rows[0].Outcome; o.Verdict != NotReproducible || !strings.Contains(o.Reason, "host's CPUs saturated in 3 of 3 runs of servers=2") {
		t.Errorf("topology row on a saturated host: %+v", o)
	}
	if len(p.Servers) != 1 || p.Servers[0] != "postgres 15.1" {
		t.Errorf("servers %v", p.Servers)
	}

	p, err = Build(synthStudy(t, one, two, host, row))
	if err != nil {
		t.Fatal(err)
	}
	if o := p.Rows[0].Outcome; o.Verdict != NotReproducible || !strings.Contains(o.Reason, "saturated in 3 of 3 runs of servers=2 but in 0 of 3 runs of servers=1") {
		t.Errorf("a row whose one side alone ran on a saturated host: %+v", o)
	}

	opposite := row
	opposite.Expect = Lower
	p, err = Build(synthStudy(t, one, two, &results.Saturated{Tier: "app", Node: "app1", Resource: "cpu"}, opposite))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Rows[0]
	if r.Outcome.Verdict != Disagrees || !strings.Contains(r.Explanation, "2 servers / 1 = 1.50 against the study's 2.00") || !strings.Contains(r.Explanation, "app app1 cpu") {
		t.Errorf("disagreement: %+v, explanation %q", r.Outcome, r.Explanation)
	}
	if md := p.Markdown(); !strings.Contains(md, "**disagrees**") || !strings.Contains(md, "Why: ") {
		t.Errorf("summary hides the disagreement:\n%s", md)
	}

	// A missing experiment result: the row says it was not measured, and why.
	dir := synthStudy(t, one, two, nil, row)
	if err := os.Remove(filepath.Join(dir, "e", results.ExperimentFile)); err != nil {
		t.Fatal(err)
	}
	p, err = Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if o := p.Rows[0].Outcome; o.Verdict != NotReproducible || !strings.Contains(o.Reason, "experiment e has no results") {
		t.Errorf("unmeasured row: %+v", o)
	}
}

// TestReferenceBaseline: `reference: {levels: {}}` (the baseline) stays
// the baseline through study.json, also as a record that dropped the
// empty levels reads it back; a reference naming only an operation keeps
// the measure's levels.
func TestReferenceBaseline(t *testing.T) {
	t.Parallel()
	one, two := []float64{100, 102, 98}, []float64{150, 152, 149}
	f := Finding{ID: "servers", Finding: "f", Setup: "s", Source: "Table 9", About: "2 servers / 1", Expect: Higher,
		Measure: &Selector{Experiment: "e", Levels: map[string]string{"servers": "2"}, Op: "(all)", Metric: "throughput"}}
	for name, ref := range map[string]*Selector{"empty levels": {Levels: map[string]string{}}, "levels dropped": {}} {
		f.Reference = ref
		p, err := Build(synthStudy(t, one, two, nil, f))
		if err != nil {
			t.Fatal(err)
		}
		r := p.Rows[0]
		if r.Reference == nil || r.Reference.Label != "servers=1" || r.Measure.Label != "servers=2" {
			t.Errorf("%s: measure %+v against reference %+v; want servers=2 against the baseline servers=1", name, r.Measure, r.Reference)
		}
	}
	f.Reference = &Selector{Op: "read"}
	if got := f.Ref(); got.Levels["servers"] != "2" || got.Op != "read" {
		t.Errorf("a reference of another operation: %+v", got)
	}
}

// TestBuildInterrupted: a finding whose experiment the user stopped
// (interrupted in it, or before it ran) is "not measured: interrupted" on
// the page, its summary and the terminal, not "not reproducible here"; a
// failed experiment still is.
func TestBuildInterrupted(t *testing.T) {
	t.Parallel()
	one, two := []float64{100, 102, 98}, []float64{150, 152, 149}
	f := Finding{ID: "servers", Finding: "2 servers faster", Setup: "s", Source: "Table 9", About: "2 servers / 1", Expect: Higher,
		Measure:   &Selector{Experiment: "e", Levels: map[string]string{"servers": "2"}, Op: "(all)", Metric: "throughput"},
		Reference: &Selector{Levels: map[string]string{"servers": "1"}}}
	for _, c := range []struct {
		name, status, errText string
		noResults             bool
		verdict, reasonHas    string
	}{
		{"interrupted with partial results", "interrupted", "experiment interrupted", false, Interrupted, "experiment e interrupted: experiment interrupted"},
		{"interrupted before any result", "interrupted", "experiment interrupted", true, Interrupted, "experiment e has no results (experiment interrupted)"},
		{"not run: the study stopped before it", "pending", "", true, Interrupted, "experiment e did not run: the study was stopped before it"},
		{"failed", "failed", "connection refused", false, NotReproducible, "not measured: experiment e failed: connection refused"},
	} {
		dir := synthStudy(t, one, two, nil, f)
		rec, err := ReadRecord(dir)
		if err != nil {
			t.Fatal(err)
		}
		rec.Status = "interrupted"
		rec.Experiments[0].Status, rec.Experiments[0].Error = c.status, c.errText
		writeJSON(t, dir, RecordFile, rec)
		if c.noResults {
			if err := os.Remove(filepath.Join(dir, "e", results.ExperimentFile)); err != nil {
				t.Fatal(err)
			}
		}
		p, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		o := p.Rows[0].Outcome
		if o.Verdict != c.verdict || !strings.Contains(o.Reason, c.reasonHas) {
			t.Errorf("%s: %s: %s; want %s with %q", c.name, o.Verdict, o.Reason, c.verdict, c.reasonHas)
		}
		if c.verdict != Interrupted {
			continue
		}
		var out strings.Builder
		if err := p.Write(dir, &out); err != nil {
			t.Fatal(err)
		}
		html, _ := os.ReadFile(filepath.Join(dir, PageFile))
		md, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
		for what, text := range map[string]string{"page": string(html), "summary": string(md), "terminal": out.String()} {
			if !strings.Contains(text, "not measured: interrupted") || strings.Contains(text, NotReproducible+"</span>") || strings.Contains(text, "**"+NotReproducible+"**") {
				t.Errorf("%s: the %s does not show the row as interrupted:\n%s", c.name, what, text)
			}
		}
		if strings.Contains(out.String(), "servers (Table 9): "+NotReproducible) {
			t.Errorf("%s: the terminal calls the row not reproducible:\n%s", c.name, out.String())
		}
	}
}
