package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
	"github.com/scalelab/scalelab/runner"
)

func run(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// errorSamples lists the error messages run.json in dir keeps per
// operation, for a failed run's test log.
func errorSamples(dir string) string {
	r, err := results.Read(dir)
	if err != nil {
		return "no run.json: " + err.Error()
	}
	var b strings.Builder
	for _, s := range r.Summary {
		for _, m := range s.ErrorSamples {
			fmt.Fprintf(&b, "error of %s: %s\n", s.Op, m)
		}
	}
	return b.String()
}

func TestBadInputExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"run", "ycbs"}, []string{`unknown scenario "ycbs"`, `did you mean "ycsb"`}},
		{[]string{"run", "ycsb", "--engine", "sqlit"}, []string{`unknown engine "sqlit"`, `did you mean "sqlite"`}},
		{[]string{"run", "ycsb", "--set", "ycsb.workloud=c"}, []string{`"ycsb.workloud"`, `did you mean "ycsb.workload"`}},
		{[]string{"run", "ycsb", "--set", "ycsb.workload=z"}, []string{"ycsb.workload", `"z"`, "a|b|c|d|e|f"}},
		{[]string{"run", "ycsb", "--set", "memory.latency=1ms"}, []string{"belongs to engine memory", "uses engine sqlite"}},
		{[]string{"run", "ycsb", "--phases", "30s@1/s,xx"}, []string{"phase 2", "DURATION@RATE"}},
		{[]string{"run", "ycsb", "--rate", "fast"}, []string{`rate "fast"`}},
		{[]string{"run", "ycsb", "--think", "soon"}, []string{`--think "soon"`, "exp:2s"}},
		{[]string{"run", "ycsb", "--rate", "10/s", "--think", "1s"}, []string{"--think does not apply to the rate model"}},
		{[]string{"run", "ycsb", "--users", "0"}, []string{"--users 0"}},
		{[]string{"run", "ycsb", "--loops", "-1"}, []string{"--loops -1", "0 to loop until --duration or --ops"}},
		{[]string{"run", "ycsb", "--rate", "10/s", "--ramp-up", "5s"}, []string{"--ramp-up does not apply to the rate model"}},
		{[]string{"run", "ycsb", "--bogus"}, []string{"run: unknown flag --bogus; see 'scalelab run --help'"}},
		{[]string{"run"}, []string{"no scenario given"}},
		{[]string{"runn"}, []string{`did you mean "run"`}},
		{[]string{"run", "ycsb", "--duration", "1s", "--warmup", "2s"}, []string{"leaves nothing to measure"}},
		{[]string{"run", "ycsb", "--duration", "-3s"}, []string{"--duration -3s must not be negative"}},
		{[]string{"run", "ycsb", "--ops", "-5"}, []string{"--ops -5 must not be negative"}},
		{[]string{"run", "ycsb", "--cache", "postgres"}, []string{"engine postgres is no key-value cache", "allowed: memcached|memory|redis"}},
	} {
		code, _, stderr := run(t, context.Background(), append(tc.args, "--out", filepath.Join(dir, "never"))...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %s", tc.args, code, stderr)
		}
		for _, w := range tc.wants {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "never")); err == nil {
		t.Error("a results directory was created for bad input")
	}
}

// A malformed --target (a password in it, a bad scheme, a URI for a file) is
// found before anything runs: exit 2 and no results directory.
func TestBadTargetExit2(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		args   []string
		want   string
		secret string
	}{
		{[]string{"run", "logs", "--engine", "postgres", "--target", "bogus::x"}, "target", ""},
		{[]string{"run", "logs", "--engine", "postgres", "--target", "postgres://u:hunter2secret@127.0.0.1:5432/db"}, "holds a password", "hunter2secret"},
		{[]string{"run", "logs", "--engine", "opensearch", "--target", "ftp://127.0.0.1:9200"}, "scheme must be http or https", ""},
		{[]string{"run", "logs", "--engine", "opensearch", "--target", "http://u:hunter2secret@127.0.0.1:9200"}, "no credentials", "hunter2secret"},
		{[]string{"run", "ycsb", "--engine", "cassandra", "--target", "u:hunter2secret@127.0.0.1:9042"}, "no credentials", "hunter2secret"},
		{[]string{"run", "ycsb", "--engine", "sqlite", "--target", "file:x.db"}, "not a file: URI", ""},
		{[]string{"run", "ycsb", "--engine", "redis", "--target", "redis://:hunter2secret@127.0.0.1:6379/0"}, "holds a password", "hunter2secret"},
		{[]string{"run", "social", "--cache", "redis", "--cache-target", "redis://app:hunter2secret@127.0.0.1:6379"}, "holds a password", "hunter2secret"},
		// a server's URL without --engine would be taken for a SQLite file name
		{[]string{"run", "logs", "--target", "postgres://u:hunter2secret@127.0.0.1:5432/db"}, "no --engine was given and the default engine, sqlite, takes a file; name the engine: --engine postgres", "hunter2secret"},
		{[]string{"run", "records", "--app", "http://u:hunter2secret@127.0.0.1:1"}, "an application URL holds no user or password", "hunter2secret"},
		{[]string{"run", "ycsb", "--target", "sqlite:///tmp/x.db"}, "the sqlite engine takes the file's path, without sqlite://", ""},
	} {
		dir := filepath.Join(t.TempDir(), fmt.Sprint(i))
		code, stdout, stderr := run(t, context.Background(), append(tc.args, "--duration", "1s", "--out", dir)...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %s", tc.args, code, stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, tc.want)
		}
		if tc.secret != "" && strings.Contains(stdout+stderr, tc.secret) {
			t.Errorf("%v: the password shows in the output: %s", tc.args, stderr)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v: a results directory was created for a run that never started (stat: %v)", tc.args, err)
		}
	}
}

func TestListPrintsEverySetting(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, context.Background(), "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"ycsb", "sqlite", "null", "memory", "closed", "rate", "phases", "ycsb.workload", "a|b|c|d|e|f", "sqlite.journal_mode", "memory.error_rate", "SETTINGS"} {
		if !strings.Contains(out, w) {
			t.Errorf("list output lacks %q", w)
		}
	}
	for i, line := range strings.Split(out, "\n") {
		if len(line) > 100 {
			t.Errorf("list line %d has %d columns (more than 100): %q", i+1, len(line), line)
		}
	}
}

// TestRunWritesResultsDirectory runs ycsb on memory and checks the results
// contract: files, status, summary fields, ok + errors = started.
func TestRunWritesResultsDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	code, out, stderr := run(t, context.Background(), "run", "ycsb", "--engine", "memory", "--users", "4", "--duration", "2s", "--warmup", "500ms",
		"--set", "ycsb.verify=true", "--set", "memory.error_rate=0.01", "--samples", "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, f := range []string{"run.json", "intervals.hlog", "series.csv", "samples.csv", "report.html"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s missing or empty", f)
		}
	}
	r := resultstest.Read(t, dir)
	// The measured window is the 1.5 s after the warm-up, plus at most the
	// drain at the stop (1 s) on a starved machine.
	if r.Status != "ok" || r.ExitCode != 0 || r.MeasuredS < 1.3 || r.MeasuredS > 2.7 || r.Process == nil {
		t.Fatalf("status %s exit %d measured %.2f", r.Status, r.ExitCode, r.MeasuredS)
	}
	for _, op := range []string{"read", "update"} {
		s, ok := r.Summary[op]
		if !ok {
			t.Fatalf("no summary for %s: %v", op, r.Summary)
		}
		if s.Count+s.Errors+s.InFlight != s.Started || s.Errors == 0 || s.ErrorsByClass["other"] != s.Errors || s.P99Ms == nil || s.ThroughputPerS <= 0 {
			t.Errorf("%s: %+v", op, s)
		}
	}
	if !strings.Contains(out, "results: "+dir) {
		t.Errorf("stdout does not print the results path:\n%s", out)
	}
}

// TestIntegrityFailureExit1: wrong data read back fails the run.
func TestIntegrityFailureExit1(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	code, out, _ := run(t, context.Background(), "run", "ycsb", "--engine", "memory", "--users", "2", "--ops", "2000",
		"--set", "ycsb.verify=true", "--set", "memory.drop_writes=0.5", "--out", dir, "--progress", "off")
	r := resultstest.Read(t, dir)
	if code != ExitCheckFailed || r.Status != "failed" || r.ExitCode != 1 || len(r.Failures) == 0 {
		t.Fatalf("exit %d status %s failures %v\n%s", code, r.Status, r.Failures, out)
	}
}

// TestUnreachableExit4: an engine that cannot open is exit 4, recorded.
func TestUnreachableExit4(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	// a server that is not there (nothing listens on the port): not a
	// configuration error, so the run keeps its results directory
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	code, _, stderr := run(t, context.Background(), "run", "ycsb", "--engine", "postgres", "--target", "postgres://scalelab@"+addr+"/db",
		"--set", "postgres.connect_timeout=2s", "--out", dir, "--progress", "off")
	r := resultstest.Read(t, dir)
	if code != ExitUnfinished || r.Status != "failed" || r.ExitCode != ExitUnfinished || !strings.Contains(stderr, "connect to postgres") {
		t.Fatalf("exit %d status %s: %s", code, r.Status, stderr)
	}
}

// TestOpsBudgetAndRateModel: --ops is exact; the rate model records
// service time and lag.
func TestOpsBudgetAndRateModel(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "ops")
	if code, out, errs := run(t, context.Background(), "run", "ycsb", "--engine", "null", "--set", "ycsb.workload=c", "--ops", "100000", "--users", "7", "--out", dir, "--progress", "off"); code != 0 {
		t.Fatalf("exit %d %s %s", code, out, errs)
	}
	if r := resultstest.Read(t, dir); r.Summary["read"].Count != 100000 || r.StopReason != "completed" || r.Load.Open {
		t.Fatalf("count %d stop %s open %v", r.Summary["read"].Count, r.StopReason, r.Load.Open)
	}
	dir = filepath.Join(t.TempDir(), "rate")
	if code, out, errs := run(t, context.Background(), "run", "ycsb", "--engine", "memory", "--rate", "2000/s", "--arrivals", "poisson", "--duration", "2s", "--out", dir, "--progress", "off"); code != 0 {
		t.Fatalf("exit %d %s %s", code, out, errs)
	}
	r := resultstest.Read(t, dir)
	// 4,000 arrivals expected (sd 63); a generator starved by a busy
	// machine starts fewer of them before the stop, never more
	if r.Lag == nil || r.Totals.Count < 2800 || r.Totals.Count > 4600 || r.Summary["read"].Service == nil || !r.Load.Open {
		t.Fatalf("rate run: lag %v totals %+v open %v", r.Lag, r.Totals, r.Load.Open)
	}
}

// TestRateCannotKeepUp: one worker against a 5 ms store cannot do 1000/s;
// the run says so and counts the late operations.
func TestRateCannotKeepUp(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	code, out, errs := run(t, context.Background(), "run", "ycsb", "--engine", "memory", "--set", "memory.latency=5ms", "--set", "ycsb.records=100",
		"--rate", "1000/s", "--users", "1", "--duration", "1s", "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("exit %d %s %s", code, out, errs)
	}
	r := resultstest.Read(t, dir)
	var late int64
	for _, s := range r.Summary {
		late += s.Late
	}
	if late == 0 || len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "could not keep up") || !strings.Contains(out, "could not keep up") {
		t.Fatalf("late %d warnings %v", late, r.Warnings)
	}
}

// TestInterruptInProcess: cancelling the context (what the first Ctrl-C
// does) finishes the results directory promptly, status interrupted, exit
// 3. By design that takes the 1 s drain plus the last interval (about
// 1.1 s on an idle machine); the bound here is 5 s so that a starved CI
// machine does not flake, while a stop that waited out the 1-minute run
// still fails.
func TestInterruptInProcess(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	ctx, cancel := context.WithCancel(context.Background())
	var at time.Time
	go func() {
		time.Sleep(1500 * time.Millisecond)
		at = time.Now()
		cancel()
	}()
	code, _, _ := run(t, ctx, "run", "ycsb", "--engine", "memory", "--duration", "1m", "--set", "memory.latency=1ms", "--set", "ycsb.records=50", "--out", dir, "--progress", "off")
	took := time.Since(at)
	r := resultstest.Read(t, dir)
	if code != ExitInterrupted || r.Status != "interrupted" || r.ExitCode != 3 || took > stopBound {
		t.Fatalf("exit %d status %s after %s", code, r.Status, took)
	}
	if s := r.Summary["read"]; s.Count == 0 || s.Count+s.Errors+s.InFlight != s.Started {
		t.Fatalf("summary %+v", s)
	}
}

// TestInterruptDuringLoad: a Ctrl-C while loading data is recorded too.
func TestInterruptDuringLoad(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	code, _, stderr := run(t, ctx, "run", "ycsb", "--engine", "memory", "--set", "memory.latency=5ms", "--set", "ycsb.records=100000", "--out", dir, "--progress", "off")
	r := resultstest.Read(t, dir)
	if code != ExitInterrupted || r.Status != "interrupted" || r.LoadPhase == nil || r.LoadPhase.Items >= 100000 || !strings.Contains(stderr, "while loading") {
		t.Fatalf("exit %d status %s load %+v: %s", code, r.Status, r.LoadPhase, stderr)
	}
}

// stopBound is how long the tests allow between the first Ctrl-C and a
// finished results directory (see TestInterruptInProcess).
const stopBound = 5 * time.Second

// TestSignals builds the binary and sends real SIGINTs: one finishes the
// results directory (exit 3); two in a row quit at once, leaving the
// streamed files with whole lines only.
func TestSignals(t *testing.T) {
	skipShort(t, "builds the binary")
	bin := buildBinary(t)
	var stderr strings.Builder
	start := func(dir string) *exec.Cmd {
		cmd := exec.Command(bin, "run", "ycsb", "--engine", "memory", "--duration", "1m", "--set", "memory.latency=1ms", "--set", "ycsb.records=50", "--out", dir, "--progress", "off")
		stderr.Reset()
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond)
		return cmd
	}
	dir := filepath.Join(t.TempDir(), "one")
	cmd := start(dir)
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	took := time.Since(sent)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || took > stopBound {
		t.Fatalf("one SIGINT: %v after %s", err, took)
	}
	if r := resultstest.Read(t, dir); r.Status != "interrupted" || r.ExitCode != 3 {
		t.Fatalf("status %s exit %d", r.Status, r.ExitCode)
	}
	if !strings.Contains(stderr.String(), "interrupted; finishing the results directory") {
		t.Errorf("a run's interrupt message does not say it finishes the results directory:\n%s", stderr.String())
	}

	dir = filepath.Join(t.TempDir(), "two")
	cmd = start(dir)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("two SIGINTs: %v", err)
	}
	for _, f := range []string{"series.csv", "intervals.hlog"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
			t.Fatalf("%s after a hard quit: torn or missing (%v)", f, err)
		}
	}
	var doc map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("run.json is not valid JSON after a hard quit: %v", err)
	}
}

// TestInterruptNotes: the message on Ctrl-C says what the command named
// does next, wherever its flags stand.
func TestInterruptNotes(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"run ycsb --duration 1m":        "finishing the results directory",
		"experiment --spec e.yaml":      "finishing the results directory",
		"serve records --listen :8080":  "letting the requests in flight end",
		"cluster up postgres --nodes 2": "stopping",
		"--help":                        "stopping",
		runner.ChildCommand + " --x y":  "finishing the results directory",
	} {
		if got := interruptNotes(strings.Fields(args)).Finishing; got != want {
			t.Errorf("%q: %q, want %q", args, got, want)
		}
	}
}

// TestMhealthOnDefaultEngine: `scalelab run mhealth --users 8` works on
// SQLite with no setup, with fresh reads and the integrity check passing.
func TestMhealthOnDefaultEngine(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	code, out, errs := run(t, context.Background(), "run", "mhealth", "--users", "8", "--duration", "2s", "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	r := resultstest.Read(t, dir)
	if r.Engine != "sqlite" || r.Status != "ok" || r.Summary["activity.post"].Count == 0 || r.Summary["totals.get"].Count == 0 {
		t.Fatalf("engine %s status %s summary %v", r.Engine, r.Status, r.Summary)
	}
	fresh, _ := r.ScenarioReport["fresh_reads"].(map[string]any)
	stale, _ := r.ScenarioReport["stale_reads"].(map[string]any)
	if fresh["totals.get"] == nil || stale["totals.get"] != float64(0) {
		t.Fatalf("scenario_report %v", r.ScenarioReport)
	}
}

// TestStoreErrorMessagesShownEscaped: what a store says reaches run.json
// and the report, as text.
func TestStoreErrorMessagesShownEscaped(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	xss := "</script><img src=x onerror=alert(1)>"
	code, out, errs := run(t, context.Background(), "run", "ycsb", "--engine", "memory", "--ops", "2000", "--set", "memory.error_rate=0.05",
		"--set", "memory.error_message="+xss, "--out", dir, "--progress", "off")
	if code != 0 {
		t.Fatalf("exit %d %s %s", code, out, errs)
	}
	r := resultstest.Read(t, dir)
	found := false
	for _, s := range r.Summary {
		for _, m := range s.ErrorSamples {
			found = found || strings.Contains(m, xss)
		}
	}
	if !found {
		t.Fatalf("no error sample carries the store's message: %+v", r.Summary)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "<img src=x") || !strings.Contains(string(page), "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;") {
		t.Fatal("the store's message is not shown escaped in report.html")
	}
}

// One rule bounds every scenario's run: --ops bounds it by operations
// alone (social's study: --ops 250000), the start says what ends it, and
// without --ops, --duration or --phases it lasts 10 s (runner's
// TestRunLengthRule).
func TestRunBoundedByOps(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "social")
	code, _, stderr := run(t, context.Background(), "run", "social", "--engine", "null", "--set", "social.users=1000", "--ops", "20000", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "the run ends after 20,000 operations (its time is estimated once the rate is known)") {
		t.Errorf("the start does not say what ends the run:\n%s", stderr)
	}
	r := resultstest.Read(t, dir)
	if r.Load.Ops != 20_000 || r.Load.DurationS != 0 {
		t.Errorf("load ops %d duration %g s, want 20000 operations and no duration", r.Load.Ops, r.Load.DurationS)
	}
	if r.Totals == nil || r.Totals.Started != 20_000 {
		t.Errorf("totals %+v, want 20000 operations done", r.Totals)
	}
	dir2 := filepath.Join(t.TempDir(), "social2")
	code, _, stderr = run(t, context.Background(), "run", "social", "--engine", "null", "--set", "social.users=1000", "--duration", "1s", "--out", dir2)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "the run ends after 1s\n") {
		t.Errorf("the start does not say what ends the run:\n%s", stderr)
	}
	if r := resultstest.Read(t, dir2); r.Load.Ops != 0 || r.Load.DurationS != 1 {
		t.Errorf("with --duration: ops %d duration %g s, want no budget and 1 s", r.Load.Ops, r.Load.DurationS)
	}
}
