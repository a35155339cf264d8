package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalelab/scalelab/audit"
	_ "github.com/scalelab/scalelab/engine/memory"
	_ "github.com/scalelab/scalelab/engine/null"
	_ "github.com/scalelab/scalelab/engine/sqlite"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
	"github.com/scalelab/scalelab/scenario"
	_ "github.com/scalelab/scalelab/scenario/logs"
	_ "github.com/scalelab/scalelab/scenario/mhealth"
	_ "github.com/scalelab/scalelab/scenario/ycsb"
	"github.com/scalelab/scalelab/setting"
)

// run executes a run and returns its document, exit code and output.
func run(t *testing.T, o *Options) (*results.Run, int, string) {
	t.Helper()
	if o.Out == "" {
		o.Out = filepath.Join(t.TempDir(), "run")
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	doc, err := p.Execute(context.Background(), nil, &out, &out)
	if doc == nil {
		t.Fatalf("no run document: %v", err)
	}
	return doc, results.ExitCode(err), out.String()
}

// TestAuditDropAcked is the test of the checker itself: the memory engine
// acknowledges but drops 1 insert or put in 1,000 (the load's 500 records
// count too), and the audit must report exactly the dropped inserts of the
// run as lost, fail the run with exit code 1 and list their ids.
func TestAuditDropAcked(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	doc, code, out := run(t, &Options{Scenario: "ycsb", Engine: "memory", Ops: 40000, Users: 4, Given: map[string]bool{"users": true}, Out: dir,
		Sets: []string{"memory.drop_acked=1/1000", "ycsb.workload=d", "ycsb.records=500"}})
	a := doc.Audit
	if a == nil || !a.Checked {
		t.Fatalf("audit %+v; output:\n%s", a, out)
	}
	loaded := doc.LoadPhase.Items
	want := (loaded+a.Acknowledged)/1000 - loaded/1000
	if a.Acknowledged < 1000 || want < 1 {
		t.Fatalf("only %d inserts acknowledged: too few to drop any", a.Acknowledged)
	}
	if a.Lost != want || int64(len(a.LostIDs)) != min(want, 20) {
		t.Errorf("lost %d (ids %v), want exactly %d", a.Lost, a.LostIDs, want)
	}
	if a.Unknown != 0 || a.Failed != 0 || a.Attempted != a.Acknowledged || a.ReadBack != a.Attempted {
		t.Errorf("audit %+v: every insert should be acknowledged and read back", a)
	}
	if code != results.ExitCheckFailed || doc.Status != results.StatusFailed || doc.ExitCode != results.ExitCheckFailed {
		t.Errorf("exit %d, status %s (run.json exit %d), want 1 and failed", code, doc.Status, doc.ExitCode)
	}
	found := false
	for _, f := range doc.Failures {
		found = found || strings.Contains(f, "acknowledged writes lost") && strings.Contains(f, idList(a.LostIDs))
	}
	if !found {
		t.Errorf("failures %q do not list the lost ids %v", doc.Failures, a.LostIDs)
	}
	if !strings.Contains(out, "FAILED: audit:") || !strings.Contains(out, "lost") {
		t.Errorf("terminal output does not report the lost writes:\n%s", out)
	}
	// run.json on disk says the same.
	disk := resultstest.Read(t, dir)
	if disk.Audit == nil || disk.Audit.Lost != a.Lost || disk.ExitCode != results.ExitCheckFailed {
		t.Errorf("run.json audit %+v, exit %d", disk.Audit, disk.ExitCode)
	}
}

func idList(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

// TestAuditLogsSQLite runs logs on SQLite with single and bulk writes:
// every acknowledged record is read back, none lost, and the results
// directory, terminal summary and report show the audit.
func TestAuditLogsSQLite(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	doc, code, out := run(t, &Options{Scenario: "logs", Engine: "sqlite", Ops: 1500, Out: dir,
		Sets: []string{"logs.records=300", "logs.mix=write:10,write_bulk:1,read:5,count_a:1", "logs.batch_size=50"}})
	a := doc.Audit
	if code != 0 || a == nil || !a.Checked {
		t.Fatalf("exit %d, audit %+v; output:\n%s", code, a, out)
	}
	if a.Lost != 0 || a.Acknowledged == 0 || a.ReadBack != a.Attempted || a.Attempted != a.Acknowledged+a.Failed+a.Unknown {
		t.Errorf("audit %+v: want every write read back, none lost", a)
	}
	h, err := audit.ReadFile(filepath.Join(dir, results.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	if c := h.Counts(); c.OK != a.Acknowledged {
		t.Errorf("history has %d acknowledged, run.json %d", c.OK, a.Acknowledged)
	}
	if !strings.Contains(out, "audit: ") || !strings.Contains(out, "0 lost") {
		t.Errorf("terminal summary has no audit line:\n%s", out)
	}
	html, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "Acknowledged-write audit") || !strings.Contains(string(html), "none lost") {
		t.Error("report.html has no audit section")
	}
	disk := resultstest.Read(t, dir)
	if disk.Audit == nil || disk.Audit.Acknowledged != a.Acknowledged || !slices.Contains(disk.Files, results.HistoryFile) {
		t.Errorf("run.json audit %+v, files %v", disk.Audit, disk.Files)
	}
}

// TestAuditOff: --audit=false writes no history and no audit section.
func TestAuditOff(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	doc, code, out := run(t, &Options{Scenario: "ycsb", Engine: "memory", Ops: 2000, Out: dir, NoAudit: true,
		Sets: []string{"ycsb.workload=d", "ycsb.records=100"}})
	if code != 0 || doc.Audit != nil {
		t.Fatalf("exit %d, audit %+v; output:\n%s", code, doc.Audit, out)
	}
	if _, err := os.Stat(filepath.Join(dir, results.HistoryFile)); !os.IsNotExist(err) {
		t.Errorf("history file with auditing off: %v", err)
	}
}

// TestAuditNull: on the null engine, which stores nothing, the audit is
// off unless asked for, and one line says so; with --audit=true, writes
// are logged but not read back, and the run does not fail.
func TestAuditNull(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	doc, code, out := run(t, &Options{Scenario: "ycsb", Engine: "null", Ops: 5000, Out: dir, Sets: []string{"ycsb.workload=d", "ycsb.records=100"}})
	if code != 0 || doc.Audit != nil || strings.Count(out, "audit: off: engine null cannot read writes back") != 1 {
		t.Fatalf("default: exit %d, audit %+v; output:\n%s", code, doc.Audit, out)
	}
	if _, err := os.Stat(filepath.Join(dir, results.HistoryFile)); !os.IsNotExist(err) {
		t.Errorf("history file with the audit off: %v", err)
	}
	doc, code, out = run(t, &Options{Scenario: "ycsb", Engine: "null", Ops: 5000, Given: map[string]bool{"audit": true}, Sets: []string{"ycsb.workload=d", "ycsb.records=100"}})
	a := doc.Audit
	if code != 0 || a == nil || a.Checked || a.NotChecked == "" || a.Acknowledged == 0 || a.Lost != 0 {
		t.Fatalf("--audit=true: exit %d, audit %+v; output:\n%s", code, a, out)
	}
}

// TestAuditMhealthMemory: mhealth's activity posts on the memory engine,
// read back, none lost; with drops, the lost ones are found.
func TestAuditMhealthMemory(t *testing.T) {
	t.Parallel()
	doc, code, out := run(t, &Options{Scenario: "mhealth", Engine: "memory", Ops: 3000, Sets: []string{"mhealth.patients=20"}})
	if a := doc.Audit; code != 0 || a == nil || !a.Checked || a.Acknowledged == 0 || a.Lost != 0 {
		t.Fatalf("exit %d, audit %+v; output:\n%s", code, a, out)
	}
	doc, code, _ = run(t, &Options{Scenario: "mhealth", Engine: "memory", Ops: 3000, Sets: []string{"mhealth.patients=20", "memory.drop_acked=1/7"}})
	if a := doc.Audit; code != results.ExitCheckFailed || a == nil || a.Lost == 0 {
		t.Fatalf("with drops: exit %d, audit %+v", code, a)
	}
}

// fakeScenario is an audited scenario whose read-back can be made to
// fail, and whose sessions prescribe their think time (the audit's
// session wrapper must keep that capability).
type fakeScenario struct{}

var (
	fakeReadBackErr atomic.Value // error returned by ReadBack, if set
	fakeThinks      atomic.Int64
	fakeIDs         atomic.Int64
	fakeBlock       chan struct{} // when set, ReadBack closes it and waits for its context
)

func init() { scenario.Register(fakeScenario{}) }

func (fakeScenario) Name() string             { return "audittest" }
func (fakeScenario) Description() string      { return "audit test scenario" }
func (fakeScenario) Settings() []setting.Spec { return nil }
func (fakeScenario) Engines() []string        { return []string{"null"} }
func (fakeScenario) Open(context.Context, scenario.Env) (scenario.Workload, error) {
	return fakeWorkload{}, nil
}

// nothingToLoad is the part of a test workload that loads nothing and
// holds nothing to release.
type nothingToLoad struct{}

func (nothingToLoad) LoadSize() int64                              { return 0 }
func (nothingToLoad) Load(context.Context, int, func(int64)) error { return nil }
func (nothingToLoad) Close() error                                 { return nil }

type fakeWorkload struct{ nothingToLoad }

func (fakeWorkload) Operations() []string                       { return []string{"fake.write"} }
func (fakeWorkload) NewSession(uint64, uint64) scenario.Session { return &fakeSession{} }
func (fakeWorkload) ReadBack(ctx context.Context, ids []int64, present []bool) error {
	if fakeBlock != nil && len(ids) > 0 {
		select {
		case <-fakeBlock:
		default:
			close(fakeBlock)
		}
		<-ctx.Done()
		return ctx.Err()
	}
	if err, ok := fakeReadBackErr.Load().(error); ok && len(ids) > 0 {
		return err
	}
	for i := range ids {
		present[i] = true
	}
	return nil
}

type fakeSession struct{ l scenario.WriteLog }

func (s *fakeSession) SetWriteLog(l scenario.WriteLog) { s.l = l }
func (s *fakeSession) Next() (int, bool)               { return 0, true }
func (s *fakeSession) Think() (time.Duration, bool)    { fakeThinks.Add(1); return 0, true }
func (s *fakeSession) Do(context.Context) error {
	s.l.Writing(fakeIDs.Add(1), 1)
	return nil
}

// TestAuditReadBackFails: a read-back that cannot finish leaves the audit
// unchecked with its error, still writes the report and the summary, and
// exits 4; the wrapped sessions kept their think times.
func TestAuditReadBackFails(t *testing.T) {
	fakeReadBackErr.Store(errors.New("store unreachable"))
	defer fakeReadBackErr.Store(errors.New("unused"))
	dir := filepath.Join(t.TempDir(), "run")
	doc, code, out := run(t, &Options{Scenario: "audittest", Engine: "null", Ops: 500, Out: dir})
	a := doc.Audit
	if code != results.ExitUnfinished || a == nil || a.Checked || !strings.Contains(a.Error, "store unreachable") || a.Acknowledged != 500 {
		t.Fatalf("exit %d, audit %+v; output:\n%s", code, a, out)
	}
	if !strings.Contains(out, "read-back incomplete") {
		t.Errorf("terminal summary does not say the read-back is incomplete:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, results.ReportFile)); err != nil {
		t.Errorf("no report: %v", err)
	}
	if disk, err := results.Read(dir); err != nil || disk.ExitCode != results.ExitUnfinished || disk.Status != results.StatusFailed {
		t.Errorf("run.json: %+v %v", disk, err)
	}
	if fakeThinks.Load() < 500 {
		t.Errorf("Think called %d times for 500 operations: the audit's wrapper hid the Thinker", fakeThinks.Load())
	}
}

// TestAuditReadBackInterrupted: Ctrl-C during the read-back ends the run
// as interrupted (exit 3), the audit unchecked.
func TestAuditReadBackInterrupted(t *testing.T) {
	fakeBlock = make(chan struct{})
	defer func() { fakeBlock = nil }()
	p, err := NewPlan(&Options{Scenario: "audittest", Engine: "null", Ops: 200, Seed: 1, Out: filepath.Join(t.TempDir(), "run")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-fakeBlock; cancel() }()
	var out bytes.Buffer
	doc, err := p.Execute(ctx, nil, &out, &out)
	if code := results.ExitCode(err); code != results.ExitInterrupted || doc.Status != results.StatusInterrupted || doc.Audit == nil || doc.Audit.Checked {
		t.Fatalf("exit %d, status %s, audit %+v; output:\n%s", code, doc.Status, doc.Audit, out.String())
	}
}
