package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/scalelab/scalelab/audit"
	"github.com/scalelab/scalelab/engine"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/scenario"
	"github.com/scalelab/scalelab/segment"
)

// auditRun is the acknowledged-write audit of one run (docs/audit.md): the
// history writer while the load runs, then the read-back.
type auditRun struct {
	w    *audit.Writer
	rb   scenario.ReadBacker     // nil: items are not read back
	rr   scenario.RegisterReader // nil: registers are not read back
	path string
	seg  segment.Segment // a divided test's segment: versions and foreign registers
	// keyOf maps a register to its key (scenario.RegisterKeyer), nil when
	// each register is a key.
	keyOf func(int64) int64
	// laterRun: a later run was recorded on the run's cluster (`scalelab
	// audit DIR`): what it may have reloaded or deleted is not judged.
	laterRun bool
	// incomplete: the run's process died (`scalelab audit DIR` of a killed
	// run), so its history lacks its last records: the writes they name
	// are not judged.
	incomplete bool
}

// startAudit creates the history file when auditing is on (always with
// --fault: NoAudit is ignored then) and the scenario's sessions are audited
// (nil otherwise). When the engine's storage cannot read anything back
// (null), the audit is off unless --audit was given explicitly (then the
// history is written and the read-back skipped), and one line on stderr
// says so.
func (p *Plan) startAudit(wl scenario.Workload, doc *results.Run, stderr io.Writer) (*auditRun, error) {
	if p.flags.NoAudit && len(p.faults) == 0 {
		return nil, nil
	}
	rb, okItems := scenario.Capability[scenario.ReadBacker](wl)
	rr, okRegs := scenario.Capability[scenario.RegisterReader](wl)
	if !okItems && !okRegs {
		return nil, nil
	}
	if p.flags.NoAudit {
		doc.Warnings = append(doc.Warnings, "--audit=false was ignored: runs with --fault are always audited")
	}
	if okItems && errors.Is(rb.ReadBack(context.Background(), nil, nil), errors.ErrUnsupported) {
		rb = nil
	}
	if okRegs && errors.Is(rr.ReadVersions(context.Background(), nil, nil), errors.ErrUnsupported) {
		rr = nil
	}
	if rb == nil && rr == nil && len(p.faults) == 0 {
		if !p.flags.Given["audit"] {
			fmt.Fprintf(stderr, "audit: off: engine %s cannot read writes back (--audit=true logs them all the same)\n", doc.Engine)
			return nil, nil
		}
		fmt.Fprintf(stderr, "audit: on (--audit=true), but engine %s cannot read writes back: they are logged, not checked\n", doc.Engine)
	}
	var keyOf func(int64) int64
	if rk, ok := scenario.Capability[scenario.RegisterKeyer](wl); ok {
		keyOf = rk.RegisterKey
	}
	path := filepath.Join(p.dir, results.HistoryFile)
	w, err := audit.Create(path, 4*runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, err
	}
	w.SetSegment(p.flags.Segment)
	doc.Files = append(doc.Files, results.HistoryFile)
	return &auditRun{w: w, rb: rb, rr: rr, path: path, seg: p.flags.Segment, keyOf: keyOf}, nil
}

// wrap returns the workload the load model drives: the errors of its
// sessions are classified by the store's engine (engine.Classifier), once,
// here, and with the audit on, audited sessions log their writes (and the
// classified outcome) to the history.
func (a *auditRun) wrap(wl scenario.Workload, cl []engine.Classifier) scenario.Workload {
	if a == nil && len(cl) == 0 {
		return wl
	}
	aw := &auditWorkload{Workload: wl, cl: cl}
	if a != nil {
		aw.w = a.w
	}
	return aw
}

// finish closes the history and reads back every written item and
// register (progress on stderr), filling run.json's audit section; a lost
// acknowledged write is a failure (exit 1). It runs after the load and
// after the cluster is healthy again. The writes were checked as they
// completed (audit.Writer): the history file is not read again. An
// interrupted run is not read back (`scalelab audit DIR` does it): its
// audit section only counts the writes. A read-back that cannot finish is
// an error (exit 4): the run's writes could not be verified; one stopped
// by Ctrl-C is an interruption (exit 3).
func (a *auditRun) finish(ctx context.Context, doc *results.Run, interrupted bool, stderr io.Writer) error {
	if a == nil {
		return nil
	}
	var h *audit.History
	if a.w != nil {
		if err := a.w.Close(); err != nil {
			return results.WithCode(results.ExitUnfinished, fmt.Errorf("audit: %w", err))
		}
		h = a.w.History()
	} else {
		var err error
		if h, err = audit.ReadFile(a.path); err != nil {
			return results.WithCode(results.ExitInternal, fmt.Errorf("audit: %w", err))
		}
		a.incomplete = a.incomplete || h.Torn
	}
	h.SetKeyOf(a.keyOf)
	switch {
	case interrupted:
		doc.Audit = audit.Summarize(h)
		doc.Audit.NotChecked = "the run was interrupted: `scalelab audit DIR` reads its writes back"
		return nil
	case a.rb == nil && a.rr == nil:
		doc.Audit = audit.Summarize(h)
		doc.Audit.NotChecked = fmt.Sprintf("engine %s cannot read writes back", doc.Engine)
		return nil
	case a.rb == nil || h.Counts().Attempted == 0:
		doc.Audit = audit.Summarize(h)
		doc.Audit.Checked = true
	default:
		fmt.Fprintf(stderr, "audit: reading back %d written items\n", h.Counts().Attempted)
		sum, err := audit.Check(ctx, h, a.rb, audit.CheckConfig{Progress: stderr, LaterRun: a.laterRun})
		doc.Audit = sum
		if err != nil {
			return readBackErr(ctx, err)
		}
		if sum.Lost > 0 {
			doc.Failures = append(doc.Failures, LostFailure(sum))
		}
		if sum.FailedPresent > 0 {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("audit: %d writes that failed with a \"not applied\" error class are stored all the same (the engine classes an applied write as rejected)", sum.FailedPresent))
		}
	}
	return a.checkRegisters(ctx, h, doc, stderr)
}

// checkRegisters reads back the registers the run's updates and deletes
// wrote (when the scenario logs them) into run.json's audit.registers; a
// lost or resurrected register is a failure (exit 1).
func (a *auditRun) checkRegisters(ctx context.Context, h *audit.History, doc *results.Run, stderr io.Writer) error {
	if h.RegisterWrites() == 0 || a.rr == nil {
		return nil
	}
	fmt.Fprintf(stderr, "audit: reading back the registers of %d updates and deletes\n", h.RegisterWrites())
	reg, err := audit.CheckRegisters(ctx, h, a.rr, audit.CheckConfig{Workers: 16, Segment: a.seg, LaterRun: a.laterRun, Incomplete: a.incomplete})
	doc.Audit.Registers = reg
	if err != nil {
		return readBackErr(ctx, err)
	}
	if reg.Lost > 0 || reg.Resurrected > 0 {
		doc.Failures = append(doc.Failures, RegisterFailure(reg))
	}
	return nil
}

// readBackErr is the error of a read-back that could not finish: an
// interruption when ctx was cancelled (exit 3), else exit 4.
func readBackErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return results.WithCode(results.ExitInterrupted, fmt.Errorf("interrupted during the audit's read-back: %w", err))
	}
	return results.WithCode(results.ExitUnfinished, err)
}

// RegisterFailure is the run.json failure message of lost or resurrected
// registers, naming the first ones with the version each held and the
// versions it may have held.
func RegisterFailure(r *results.RegisterAudit) string {
	var ex []string
	for _, e := range r.Examples {
		seen := fmt.Sprintf("v%d", e.Seen)
		switch e.Seen {
		case audit.Absent:
			seen = "absent"
		case audit.Initial:
			seen = "its value from before the run"
		}
		unit := "key"
		if r.Registers > 0 {
			unit = "register"
		}
		ex = append(ex, fmt.Sprintf("%s %d %s: holds %s, want %s", unit, e.Key, e.Kind, seen, strings.Join(e.Want, " or ")))
	}
	more := ""
	if n := r.Lost + r.Resurrected; n > int64(len(ex)) {
		more = "; ..."
	}
	of := fmt.Sprintf("%d updated or deleted keys", r.Keys)
	what := "keys"
	if r.Registers > 0 {
		of = fmt.Sprintf("%d updated or deleted registers (fields of %d keys)", r.Registers, r.Keys)
		what = "registers"
	}
	return fmt.Sprintf("audit: %d of %s lost an acknowledged write (%d lost, %d resurrected %s): %s%s",
		r.Lost+r.Resurrected, of, r.Lost, r.Resurrected, what, strings.Join(ex, "; "), more)
}

// LostFailure is the run.json failure message of an audit with lost
// writes: how many and the first ids.
func LostFailure(a *results.Audit) string {
	ids := make([]string, len(a.LostIDs))
	for i, id := range a.LostIDs {
		ids[i] = fmt.Sprint(id)
	}
	more := ""
	if a.Lost > int64(len(a.LostIDs)) {
		more = ", ..."
	}
	return fmt.Sprintf("audit: %d of %d acknowledged writes lost (the store acknowledged them but does not hold them); first ids: %s%s", a.Lost, a.Acknowledged, strings.Join(ids, ", "), more)
}

// auditWorkload wraps a workload so that its audited sessions log their
// writes. Its capabilities (Checker, Reporter, ReadBacker, ...) are the
// wrapped workload's, found through Unwrap (scenario.Capability).
type auditWorkload struct {
	scenario.Workload
	w  *audit.Writer       // nil: no audit
	cl []engine.Classifier // the store's and the tiers' (tiers.go)
}

var (
	_ scenario.WriteLog    = (*audit.Log)(nil)
	_ scenario.RegisterLog = (*audit.Log)(nil)
)

// Unwrap returns the workload the audit wraps.
func (a *auditWorkload) Unwrap() scenario.Workload { return a.Workload }

// NewSession wraps sessions that implement scenario.Audited (or that the
// run classifies the errors of); their Thinker and Composer are found
// through Unwrap.
func (a *auditWorkload) NewSession(id uint64, seed uint64) scenario.Session {
	s := a.Workload.NewSession(id, seed)
	as := &auditSession{Session: s, cl: a.cl}
	if au, ok := s.(scenario.Audited); ok && a.w != nil {
		as.l = a.w.Log(id)
		au.SetWriteLog(as.l)
	}
	if as.l == nil && len(as.cl) == 0 {
		return s
	}
	return as
}

// auditSession classifies each Do's error and logs the outcome of the
// writes it invoked.
type auditSession struct {
	scenario.Session
	l  *audit.Log          // nil: not audited
	cl []engine.Classifier // the first that recognises an error classes it
}

// Do runs the operation, classifies its error and logs the outcome of the
// writes it invoked.
func (s *auditSession) Do(ctx context.Context) error {
	err := s.Session.Do(ctx)
	if err != nil {
		for _, c := range s.cl {
			if classed := c.Classify(ctx, err); classed != err {
				err = classed
				break
			}
		}
	}
	if s.l != nil {
		s.l.Done(err)
	}
	return err
}

// Unwrap returns the session the audit wraps.
func (s *auditSession) Unwrap() scenario.Session { return s.Session }

// close closes the history after a run that failed before its audit.
func (a *auditRun) close() {
	if a != nil && a.w != nil {
		_ = a.w.Close()
	}
}
