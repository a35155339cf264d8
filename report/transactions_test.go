package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/metrics"
	"github.com/scalelab/scalelab/results"
)

// TestTerminalTransactions: the phases with their HTTP responses by
// status (from the per-second counts of a web scenario), the break, and
// from the break's phase on each failed status per second, a line per
// phase, the drain counted in the last.
func TestTerminalTransactions(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &results.Run{Transactions: &results.Transactions{
		Phases: []results.PhaseFigures{
			{Phase: "3s@1/s", FromS: 0, ToS: 3, Requests: 6, MeanMs: f(10), P50Ms: f(9)},
			{Phase: "3s@2/s", FromS: 3, ToS: 6, Requests: 12, Errors: 3, ErrorPct: 25, MeanMs: f(80), P50Ms: f(70)},
		},
		Rule:  &results.BreakRule{ErrorPct: 1, MeanFactor: 5},
		Break: &results.Break{Index: 2, Phase: "3s@2/s", FromS: 3, Reason: "25.0% of its requests failed (over 1%)"},
	}, ScenarioReport: map[string]any{"http": map[string]any{"since": "the load began", "per_second": []any{
		map[string]any{"t": 0, "codes": map[string]any{"200": 2}},
		map[string]any{"t": 1, "codes": map[string]any{"200": 2}},
		map[string]any{"t": 2, "codes": map[string]any{"303": 2}},
		map[string]any{"t": 3, "codes": map[string]any{"200": 3, "503": 1}},
		map[string]any{"t": 5, "codes": map[string]any{"200": 3, "503": 2}},
		map[string]any{"t": 6, "codes": map[string]any{"502": 1}},
	}}}}
	var b bytes.Buffer
	TerminalTransactions(&b, r)
	out := b.String()
	for _, want := range []string{
		"200 x4, 303 x2",         // phase 1's responses
		"200 x6, 502 x1, 503 x3", // phase 2's, with the drain's 502
		"break: phase 2, 3s@2/s (from 3 s): 25.0% of its requests failed",
		"HTTP 502 per second in phase 2 (3-7 s): 0 0 0 1",
		"HTTP 503 per second in phase 2 (3-7 s): 1 0 2 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "per second in phase 1") {
		t.Errorf("failures per second printed before the break:\n%s", out)
	}
	// counted from the first response: the seconds cannot be placed in phases
	r.ScenarioReport["http"].(map[string]any)["since"] = "the first response"
	b.Reset()
	TerminalTransactions(&b, r)
	if strings.Contains(b.String(), "x4") || strings.Contains(b.String(), "per second in phase") || !strings.Contains(b.String(), "break: phase 2") {
		t.Errorf("responses counted from the first response were put in phases:\n%s", b.String())
	}
}

// TestTransactionsSection: the run page draws the mean duration per
// second (the broken phases shaded) and tabulates the phases with their
// HTTP responses, under its own heading.
func TestTransactionsSection(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &results.Run{Scenario: "records", Engine: "sqlite", Status: results.StatusOK, Summary: map[string]metrics.OpSummary{},
		Load: results.Load{Model: "phases", Open: true},
		Transactions: &results.Transactions{
			PerSecond: []results.TxSecond{{T: 1, N: 2, MeanMs: f(10)}, {T: 2, N: 3, MeanMs: f(12)}, {T: 3, N: 5, Errors: 2, MeanMs: f(400)}, {T: 4, N: 0}},
			Phases: []results.PhaseFigures{
				{Phase: "2s@1/s", FromS: 0, ToS: 2, Requests: 5, MeanMs: f(11.2), MeanFactor: f(1)},
				{Phase: "2s@4/s", FromS: 2, ToS: 4, Requests: 5, Errors: 2, ErrorPct: 40, MeanMs: f(400), MeanFactor: f(35.7)},
			},
			Rule:  &results.BreakRule{ErrorPct: 1, MeanFactor: 5},
			Break: &results.Break{Index: 2, Phase: "2s@4/s", FromS: 2, Reason: "40.0% of its requests failed (over 1%)"},
		}}
	tabs, charts := transactionsFigures(r, 4)
	if len(charts) != 1 || len(tabs) != 1 || len(tabs[0].Rows) != 2 || tabs[0].Rows[1][12] != "yes" || tabs[0].Rows[0][12] != "" {
		t.Fatalf("charts %d, tables %+v", len(charts), tabs)
	}
	if !strings.Contains(tabs[0].Note, "the first that did is phase 2, 2s@4/s") {
		t.Errorf("note %q", tabs[0].Note)
	}
	dir := t.TempDir()
	page := renderPage(t, r, dir)
	for _, want := range []string{"Requests over time and by phase", "Mean request duration over time", "broken from phase 2", "Phases: requests, errors and duration"} {
		if !strings.Contains(html.UnescapeString(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	r.Transactions = nil
	if tabs, charts := transactionsFigures(r, 4); tabs != nil || charts != nil {
		t.Error("figures without transactions")
	}
}
