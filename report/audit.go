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
		Cols: []string{"writes", "attempted", "acknowledged", "lost", "failed", "unknown", "unknown, present", "unknown, absent"},
		Note: auditNote(a)}
	rb := func(checked bool, n int64) string {
		if !checked {
			return "-"
		}
		return fmt.Sprint(n)
	}
	t.Rows = [][]string{{"inserts (items)", fmt.Sprint(a.Attempted), fmt.Sprint(a.Acknowledged), rb(a.Checked, a.Lost), fmt.Sprint(a.Failed), fmt.Sprint(a.Unknown),
		rb(a.Checked, a.UnknownPresent), rb(a.Checked, a.UnknownAbsent)}}
	if g := a.Registers; g != nil {
		t.Rows = append(t.Rows, []string{"updates and deletes", fmt.Sprint(g.Writes), fmt.Sprint(g.Acknowledged), rb(g.Checked, g.Lost+g.Resurrected),
			fmt.Sprint(g.Failed), fmt.Sprint(g.Unknown), "-", "-"})
	}
	return t
}

// registerNote states the verdict on updates and deletes.
func registerNote(g *results.RegisterAudit) string {
	switch {
	case g.Checked && g.Lost+g.Resurrected > 0:
		var ex []string
		for _, e := range g.Examples {
			ex = append(ex, fmt.Sprintf("%d (%s)", e.Key, e.Kind))
		}
		return fmt.Sprintf("Updates and deletes: %d of %d keys written do not hold a value they may hold (%d lost, %d resurrected); first keys: %s. ",
			g.Lost+g.Resurrected, g.Keys, g.Lost, g.Resurrected, strings.Join(ex, ", "))
	case g.Checked:
		return fmt.Sprintf("Updates and deletes: every one of the %d keys written holds the value of its last acknowledged write, or of one that overlapped it or whose outcome is unknown (%d ambiguous keys), read back in %.1f s. ",
			g.Keys, g.Ambiguous, g.Seconds)
	case g.Error != "":
		return "Updates and deletes: the read-back did not finish: " + g.Error + ". "
	}
	return "Updates and deletes: not read back. "
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
	if a.Registers != nil {
		b.WriteString(registerNote(a.Registers))
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
	if a.Registers != nil && a.Attempted == 0 {
		terminalRegisters(w, a.Registers)
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
	if a.Registers != nil {
		terminalRegisters(w, a.Registers)
	}
}

// terminalRegisters prints the audit line of updates and deletes.
func terminalRegisters(w io.Writer, g *results.RegisterAudit) {
	fmt.Fprintf(w, "audit: %d updates and deletes of %d keys, %d acknowledged, %d failed, %d unknown", g.Writes, g.Keys, g.Acknowledged, g.Failed, g.Unknown)
	if g.Checked {
		fmt.Fprintf(w, "; read back: %d lost, %d resurrected, %d ambiguous", g.Lost, g.Resurrected, g.Ambiguous)
		if g.Foreign > 0 {
			fmt.Fprintf(w, ", %d last written by other segments", g.Foreign)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "; not read back")
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
