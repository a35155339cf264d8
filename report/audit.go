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
		return fmt.Sprintf("Updates and deletes: %d of %s written do not hold a value they may hold (%d lost, %d resurrected); first: %s. %s",
			g.Lost+g.Resurrected, registersOf(g), g.Lost, g.Resurrected, strings.Join(ex, ", "), unloggedNote(g.Unlogged)+overwrittenNote(g.Overwritten))
	case g.Checked:
		return fmt.Sprintf("Updates and deletes: every one of the %s written holds the value of its last acknowledged write, or of one that overlapped it or whose outcome is unknown (%d ambiguous: more than one write may be the final one, and any of them is accepted), read back in %.1f s. %s",
			registersOf(g), g.Ambiguous, g.Seconds, unloggedNote(g.Unlogged)+overwrittenNote(g.Overwritten))
	case g.Error != "":
		return "Updates and deletes: the read-back did not finish: " + g.Error + ". "
	}
	return "Updates and deletes: not read back. "
}

// registersOf words the registers an audit checked: "1000 keys", or
// "9990 registers (fields of 1000 keys)".
// A merged divided test's figures are the most of any one segment:
// "at least 9990 registers (fields of at least 1000 keys)".
func registersOf(g *results.RegisterAudit) string {
	least := ""
	if g.KeysAtLeast {
		least = "at least "
	}
	if g.Registers > 0 {
		return fmt.Sprintf("%s%d registers (fields of %s%d keys)", least, g.Registers, least, g.Keys)
	}
	return fmt.Sprintf("%s%d keys", least, g.Keys)
}

// unloggedWords says what the registers a killed run's history never
// recorded hold (results.RegisterAudit.Unlogged).
const unloggedWords = "written by the run but not yet recorded when it was killed: not judged"

// unloggedNote says how many registers hold a write the killed run's
// history never recorded (not judged).
func unloggedNote(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d %s (the process died before it wrote their records to %s). ", n, unloggedWords, results.HistoryFile)
}

// overwrittenNote says how many registers or items the store changed
// after the run (not judged).
func overwrittenNote(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d overwritten since the run: not judged (a later version, or a later run on the same store). ", n)
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
	}
	b.WriteString(overwrittenNote(a.Overwritten))
	switch {
	case a.Checked:
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
		b.WriteString("The history ended in a partial record (the process died while writing it), which was ignored.")
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

// TerminalAudit prints the audit's lines under the terminal summary
// (one for inserted items, one for updates and deletes, as the run has
// them); nothing for a run without an audit.
func TerminalAudit(w io.Writer, r *results.Run) {
	a := r.Audit
	if a == nil {
		return
	}
	if a.Registers != nil && a.Attempted == 0 {
		terminalRegisters(w, a, a.Registers)
		return
	}
	fmt.Fprintf(w, "audit: %d writes attempted, %d acknowledged, %d failed, %d unknown", a.Attempted, a.Acknowledged, a.Failed, a.Unknown)
	switch {
	case a.Checked:
		fmt.Fprintf(w, "; read back: %d lost, unknown %d present / %d absent", a.Lost, a.UnknownPresent, a.UnknownAbsent)
		if a.Overwritten > 0 {
			fmt.Fprintf(w, ", %d overwritten since the run: not judged", a.Overwritten)
		}
		fmt.Fprintln(w)
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
		terminalRegisters(w, nil, a.Registers)
	}
}

// terminalRegisters prints the audit line of updates and deletes; a, when
// not nil, is the audit whose not-checked reason applies.
func terminalRegisters(w io.Writer, a *results.Audit, g *results.RegisterAudit) {
	fmt.Fprintf(w, "audit: %d updates and deletes of %s, %d acknowledged, %d failed, %d unknown", g.Writes, registersOf(g), g.Acknowledged, g.Failed, g.Unknown)
	switch {
	case g.Checked:
		fmt.Fprintf(w, "; read back: %d lost, %d resurrected", g.Lost, g.Resurrected)
		if g.Unlogged > 0 {
			fmt.Fprintf(w, ", %d %s", g.Unlogged, unloggedWords)
		}
		if g.Overwritten > 0 {
			fmt.Fprintf(w, ", %d overwritten since the run: not judged", g.Overwritten)
		}
		if g.Foreign > 0 {
			fmt.Fprintf(w, ", %d last written by other segments", g.Foreign)
		}
		if g.Ambiguous > 0 {
			fmt.Fprintf(w, "; %d ambiguous (writes that overlapped or timed out: any of them may be the final value, and is accepted)", g.Ambiguous)
		}
		fmt.Fprintln(w)
	case g.Error != "":
		fmt.Fprintf(w, "; read-back incomplete: %s\n", g.Error)
	case a != nil && a.NotChecked != "":
		fmt.Fprintf(w, "; not read back: %s\n", a.NotChecked)
	default:
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
