package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/results"
)

// TestRebuildAudit: a run killed mid-way (run.json still "running") left a
// history file whose last line is torn; `scalelab report DIR` rebuilds the
// audit counts from what was streamed (writes with no outcome count as
// unknown, in flight), marks them not read back, and shows them.
func TestRebuildAudit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := synth{intervals: 4, ops: []string{"insert", "read"}, perOp: 100, status: results.StatusRunning}
	s.write(t, dir)
	w, err := audit.Create(filepath.Join(dir, results.HistoryFile), 2)
	if err != nil {
		t.Fatal(err)
	}
	l := w.Log(0)
	for i := range int64(40) {
		l.Writing(i, 1)
		l.Done(nil)
	}
	l.Writing(40, 10) // a bulk write in flight when the process died
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, results.HistoryFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{20, 0xa1, 0xb2}) // a block torn as the process died: its length, part of its checksum
	f.Close()
	age(t, dir)
	r, rebuilt, err := Rebuild(dir)
	if err != nil || !rebuilt {
		t.Fatalf("rebuilt %v, err %v", rebuilt, err)
	}
	a := r.Audit
	if a == nil || a.Attempted != 50 || a.Acknowledged != 40 || a.Unknown != 10 || a.Checked || !a.TornLine || a.NotChecked == "" {
		t.Fatalf("rebuilt audit %+v, want 50 attempted, 40 acknowledged, 10 unknown, torn, not checked", a)
	}
	if a.UnknownByClass["in_flight"] != 10 {
		t.Errorf("unknown by class %v", a.UnknownByClass)
	}
	if r.Status != results.StatusIncomplete {
		t.Errorf("status %s", r.Status)
	}
	back, err := results.Read(dir)
	if err != nil || back.Audit == nil || back.Audit.Acknowledged != 40 {
		t.Fatalf("run.json audit %+v (%v)", back.Audit, err)
	}
	var term bytes.Buffer
	TerminalAudit(&term, r)
	if !strings.Contains(term.String(), "40 acknowledged") || !strings.Contains(term.String(), "not read back") {
		t.Errorf("terminal: %q", term.String())
	}
	page := renderPage(t, r, dir)
	for _, want := range []string{"Acknowledged-write audit", "Not read back", "partial record"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestAuditTable: the report's verdicts for a checked audit with and
// without lost writes.
func TestAuditTable(t *testing.T) {
	t.Parallel()
	r := &results.Run{Audit: &results.Audit{Attempted: 10, Acknowledged: 9, Unknown: 1, Checked: true, ReadBack: 10, Lost: 2, LostIDs: []int64{3, 7}, UnknownPresent: 1}}
	tb := auditTable(r)
	if tb == nil || tb.Rows[0][3] != "2" || !strings.Contains(tb.Note, "first ids: 3, 7") {
		t.Fatalf("table %+v", tb)
	}
	r.Audit.Lost, r.Audit.LostIDs = 0, nil
	if tb = auditTable(r); !strings.Contains(tb.Note, "none lost") {
		t.Errorf("note %q", tb.Note)
	}
	if auditTable(&results.Run{}) != nil {
		t.Error("a table for a run without an audit")
	}
	r.Audit.Registers = &results.RegisterAudit{Keys: 5, Writes: 8, Acknowledged: 8, Checked: true, ReadBack: 5, Lost: 1, Resurrected: 1,
		Examples: []results.RegisterLoss{{Key: 4, Kind: "lost"}, {Key: 9, Kind: "resurrected"}}}
	tb = auditTable(r)
	if len(tb.Rows) != 2 || tb.Rows[1][0] != "updates and deletes" || tb.Rows[1][3] != "2" || !strings.Contains(tb.Note, "4 (lost), 9 (resurrected)") {
		t.Errorf("table with registers %+v", tb)
	}
}
