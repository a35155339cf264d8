package report

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/results"
)

// auditTable is the run page's acknowledged-write audit table (nil for a
// run without an audit).
func auditTable(r *results.Run) *figTable {
	a := r.Audit
	if a == nil {
		return nil
	}
	t := &figTable{
		Cols: []string{"attempted", "acknowledged", "lost", "failed", "unknown", "unknown, present", "unknown, absent"},
		Note: auditNote(a)}
	rb := func(n int64) string {
		if !a.Checked {
			return "-"
		}
		return fmt.Sprint(n)
	}
	t.Rows = [][]string{{fmt.Sprint(a.Attempted), fmt.Sprint(a.Acknowledged), rb(a.Lost), fmt.Sprint(a.Failed), fmt.Sprint(a.Unknown),
		rb(a.UnknownPresent), rb(a.UnknownAbsent)}}
	return t
}

// auditNote explains the audit's figures and states its verdict.
func auditNote(a *results.Audit) string {
	var b strings.Builder
	b.WriteString("Items written (a bulk write of n records counts n), each logged in " + results.HistoryFile + " before it was sent and when it returned. ")
	switch {
	case a.Checked && a.Lost > 0:
		fmt.Fprintf(&b, "%d acknowledged items are missing from the store; first ids: %s. ", a.Lost, idList(a.LostIDs))
	case a.Checked:
		fmt.Fprintf(&b, "Every acknowledged item was read back (%d items in %.1f s): none lost. ", a.ReadBack, a.Seconds)
	case a.NotChecked != "":
		b.WriteString("Not read back: " + a.NotChecked + ". ")
	case a.Error != "":
		b.WriteString("The read-back did not finish: " + a.Error + ". ")
	default:
		b.WriteString("Not read back (the process ended before the audit). ")
	}
	if len(a.UnknownByClass) > 0 {
		b.WriteString("Unknown outcomes by class: " + classes(a.UnknownByClass) + ". ")
	}
	if a.FailedPresent > 0 {
		fmt.Fprintf(&b, "%d failed items are stored all the same. ", a.FailedPresent)
	}
	if a.TornLine {
		b.WriteString("The history ended in a partial line (the process died while writing it), which was ignored.")
	}
	return strings.TrimSpace(b.String())
}

func idList(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}

// TerminalAudit prints the audit's line under the terminal summary;
// nothing for a run without an audit.
func TerminalAudit(w io.Writer, r *results.Run) {
	a := r.Audit
	if a == nil {
		return
	}
	fmt.Fprintf(w, "audit: %d writes attempted, %d acknowledged, %d failed, %d unknown", a.Attempted, a.Acknowledged, a.Failed, a.Unknown)
	switch {
	case a.Checked:
		fmt.Fprintf(w, "; read back: %d lost, unknown %d present / %d absent\n", a.Lost, a.UnknownPresent, a.UnknownAbsent)
	case a.NotChecked != "":
		fmt.Fprintf(w, "; not read back: %s\n", a.NotChecked)
	case a.Error != "":
		fmt.Fprintf(w, "; read-back incomplete: %s\n", a.Error)
	default:
		fmt.Fprintln(w, "; not read back")
	}
	if len(a.UnknownByClass) > 0 {
		fmt.Fprintf(w, "  unknown by class: %s\n", classes(a.UnknownByClass))
	}
}

// rebuildAudit fills in the audit section of a run whose process died
// (Rebuild) from what its history file streamed: the writes' outcomes,
// without a read-back. A run without a history file is left alone.
func rebuildAudit(dir string, r *results.Run) {
	h, err := audit.ReadFile(filepath.Join(dir, results.HistoryFile))
	if err != nil {
		if !errors.Is(err, audit.ErrNoHistory) {
			r.Warnings = append(r.Warnings, "audit: "+err.Error())
		}
		return
	}
	r.Audit = audit.Summarize(h)
	r.Audit.NotChecked = "the process died before the read-back; writes with no recorded outcome count as unknown (in_flight)"
	r.Files = append(r.Files, results.HistoryFile)
}
