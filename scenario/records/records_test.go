package records_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalelab/scalelab/cli"
	"github.com/scalelab/scalelab/engine/postgres"
	"github.com/scalelab/scalelab/internal/testenv"
	"github.com/scalelab/scalelab/results"
	"github.com/scalelab/scalelab/results/resultstest"
	"github.com/scalelab/scalelab/scenario/records"
)

// fast makes the site's visits quick for a test: short think times, the
// cheapest bcrypt, a small seed.
var fast = []string{"--set", "records.think_page=50ms", "--set", "records.think_form=100ms", "--set", "records.bcrypt_cost=4",
	"--set", "records.providers=500", "--set", "records.patients=400", "--set", "records.csrf_probe=0.5"}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// runRecords runs `scalelab run records` with the fast settings, then
// args, into a new directory; it logs what the run printed, fails t
// unless it exits with want, and returns run.json.
func runRecords(t *testing.T, want int, args ...string) *results.Run {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "r")
	all := append(append([]string{"run", "records", "--out", dir, "--progress", "off"}, fast...), args...)
	code, out, errs := runCLI(t, all...)
	t.Logf("exit %d\n%s\n%s", code, out, errs)
	if code != want {
		t.Fatalf("scalelab %v: exit %d, want %d", args, code, want)
	}
	r := resultstest.Read(t, dir)
	return r
}

// integrityErrors sums the integrity errors of ops in r.
func integrityErrors(r *results.Run, ops ...string) int64 {
	var n int64
	for _, op := range ops {
		n += r.Summary[op].ErrorsByClass["integrity"]
	}
	return n
}

// TestRecordsSQLite runs the site in this process on SQLite and drives it
// over real HTTP: every kind of visit, status codes counted per operation
// and per second (303 after each post, 403 for a post without its CSRF
// token and for a provider without a grant, 404 after a deletion), no
// error, and every acknowledged sign-up, record post, grant and deletion
// read back.
func TestRecordsSQLite(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	r := runRecords(t, 0, "--duration", "5s", "--users", "8")
	if r.Totals.Errors != 0 {
		for op, s := range r.Summary {
			if s.Errors > 0 {
				t.Errorf("%s: %d errors: %v", op, s.Errors, s.ErrorSamples)
			}
		}
	}
	for _, op := range []string{"signup", "medical_post", "share", "revoke", "delete_account", "check_revoked", "check_deleted", "view_denied", "login", "csrf_probe"} {
		if s, ok := r.Summary[op]; !ok || s.Count == 0 {
			t.Errorf("no %s done", op)
		}
	}
	http, _ := r.ScenarioReport["http"].(map[string]any)
	by, _ := http["by_operation"].(map[string]any)
	want := map[string]string{"signup": "303", "csrf_probe": "403", "check_revoked": "403", "check_deleted": "404", "view_denied": "403", "home": "200"}
	for op, code := range want {
		m, _ := by[op].(map[string]any)
		if n, _ := m[code].(float64); n == 0 {
			t.Errorf("%s: no %s counted (%v)", op, code, m)
		}
	}
	if secs, _ := http["per_second"].([]any); len(secs) < 4 {
		t.Errorf("per-second status counts: %v", secs)
	}
	a := r.Audit
	if a == nil || a.Registers == nil || !a.Checked || a.Registers.Acknowledged == 0 || a.Registers.Lost != 0 {
		t.Errorf("audit %+v", a)
	}
}

// TestRecordsAnswersAudited: a returning patient's accept or decline of a
// provider's request is an audited update of the grant's register (the
// one the provider's request inserted), read back after the run; an
// answer to a request another visit already answered is failed, not
// taken for the register's value. A small seed makes patients find
// requests.
func TestRecordsAnswersAudited(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	r := runRecords(t, 0, "--duration", "4s", "--users", "8", "--set", "records.patients=12", "--set", "records.mix=provider:1,returning:2")
	asked, answered := r.Summary["request_access"].Count, r.Summary["answer_request"].Count
	reg := r.Audit.Registers
	if answered == 0 || reg == nil {
		t.Fatalf("%d requests, %d answers, audit %+v", asked, answered, r.Audit)
	}
	if reg.Writes < asked+answered || reg.Lost != 0 || !r.Audit.Checked {
		t.Errorf("%d requests and %d answers, but the audit logged %d register writes (%d lost): %+v", asked, answered, reg.Writes, reg.Lost, reg)
	}
}

// TestRecordsLeakFailsRun: a site that serves records without checking
// grants (reachable from tests only) is caught by the sessions' access
// checks, and the run fails (exit 1).
func TestRecordsLeakFailsRun(t *testing.T) {
	undo := records.SetLeakForTests()
	defer undo()
	t.Setenv("SCALELAB_HOME", t.TempDir())
	r := runRecords(t, 1, "--duration", "3s", "--users", "6", "--set", "records.mix=signup:1,provider:1")
	leaks := integrityErrors(r, "check_revoked", "check_deleted", "view_denied")
	if leaks == 0 || !strings.Contains(strings.Join(r.Failures, "\n"), "integrity") {
		t.Errorf("integrity errors %d, failures %v", leaks, r.Failures)
	}
}

// TestRecordsPostgresReplica: the site on a PostgreSQL primary + replica,
// its reads from the replica except within each user's read-your-writes
// window, with indexes off and the providers page in one query: no error,
// the access checks hold, every acknowledged write read back.
func TestRecordsPostgresReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	if _, err := postgres.BinDir(); err != nil {
		testenv.Unavailable(t, "postgres", err, "apt-get install postgresql")
	}
	t.Setenv("SCALELAB_HOME", t.TempDir())
	if code, out, errs := runCLI(t, "cluster", "up", "postgres", "--name", "recpg", "--replicas", "1"); code != 0 {
		t.Fatalf("cluster up: %s %s", out, errs)
	}
	t.Cleanup(func() { runCLI(t, "cluster", "down", "recpg") })
	r := runRecords(t, 0, "--cluster", "recpg", "--duration", "5s", "--users", "8",
		"--set", "postgres.read_from=replicas", "--set", "records.indexes=false", "--set", "records.eager=true")
	if r.Totals.Errors != 0 || r.Summary["view_denied"].Count == 0 || r.Summary["check_revoked"].Count == 0 {
		t.Errorf("totals %+v, view_denied %+v", r.Totals, r.Summary["view_denied"])
	}
	if a := r.Audit; a == nil || a.Registers == nil || a.Registers.Acknowledged == 0 || a.Registers.Lost != 0 {
		t.Errorf("audit %+v", a)
	}
	if r.Settings["records.indexes"] != "false" || r.Settings["postgres.read_from"] != "replicas" {
		t.Errorf("settings %v", r.Settings)
	}
}

// TestRecordsKeepSeed: a run with records.load=false after another keeps
// the seed and removes what the earlier run added, so that its sign-ups,
// grants and audit keys do not collide with the earlier run's.
func TestRecordsKeepSeed(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	db := filepath.Join(t.TempDir(), "records.db")
	for i, load := range []string{"true", "false"} {
		r := runRecords(t, 0, "--target", db, "--duration", "3s", "--users", "6", "--set", "records.load="+load)
		if r.Totals.Errors != 0 || r.Audit == nil || r.Audit.Registers == nil || r.Audit.Registers.Lost != 0 {
			t.Errorf("run %d (records.load=%s): %d errors, audit %+v", i+1, load, r.Totals.Errors, r.Audit)
		}
	}
}

// TestRecordsStudyMix: with records.mix=study every request is one of the
// study's 11 (no provider's checks, no probe, no reload), every post is
// answered 303 and every page 200, bcrypt signs up each patient once, and
// the audit reads back what the visits wrote.
func TestRecordsStudyMix(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	r := runRecords(t, 0, "--duration", "4s", "--users", "6", "--set", "records.mix=study", "--set", "records.revisit=0.5")
	http, _ := r.ScenarioReport["http"].(map[string]any)
	by, _ := http["by_operation"].(map[string]any)
	want := map[string]string{}
	for _, op := range records.StudyPath {
		want[op] = "200"
	}
	for _, op := range []string{"signup", "medical_post", "share", "delete_account"} {
		want[op] = "303"
	}
	for op, m := range by {
		codes, _ := m.(map[string]any)
		if want[op] == "" {
			t.Errorf("%s requested (%v): not in the study's path", op, codes)
			continue
		}
		for c, n := range codes {
			if c != want[op] {
				t.Errorf("%s: %v responses %s, want only %s", op, n, c, want[op])
			}
		}
	}
	for _, op := range records.StudyPath {
		if r.Summary[op].Count == 0 {
			t.Errorf("no %s done", op)
		}
	}
	if r.Totals.Errors != 0 || r.Summary["signup"].Count < r.Summary["delete_account"].Count {
		t.Errorf("%d errors; %d sign-ups, %d deletions", r.Totals.Errors, r.Summary["signup"].Count, r.Summary["delete_account"].Count)
	}
	if a := r.Audit; a == nil || a.Registers == nil || a.Registers.Acknowledged == 0 || a.Registers.Lost != 0 {
		t.Errorf("audit %+v", a)
	}
}

// TestRecordsOverloadBreaks: an in-process app server with one worker and
// a queue of one, driven with the study's sessions without think time at
// 60 sessions a second, answers 503 at once once its queue is full; the
// run counts the 503s per second from the load's start, and finds the
// phase that broke (by phases.break_errors, here 0.1 %).
func TestRecordsOverloadBreaks(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "r")
	code, out, errs := runCLI(t, "run", "records", "--phases", "2s@1/s,3s@60/s", "--out", dir, "--progress", "off", "--set", "phases.break_errors=0.1",
		"--set", "records.mix=study", "--set", "records.think_page=0s", "--set", "records.think_form=0s", "--set", "records.bcrypt_cost=4",
		"--set", "records.providers=500", "--set", "records.patients=400", "--set", "records.max_inflight=1", "--set", "records.max_queue=1")
	t.Logf("exit %d\n%s", code, out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := resultstest.Read(t, dir)
	http, _ := r.ScenarioReport["http"].(map[string]any)
	var per503 float64
	for _, s := range http["per_second"].([]any) {
		codes, _ := s.(map[string]any)["codes"].(map[string]any)
		n, _ := codes["503"].(float64)
		per503 += n
	}
	app, _ := r.ScenarioReport["app"].(map[string]any)
	if shed, _ := app["queue_full_503"].(float64); per503 == 0 || shed == 0 || http["since"] != "the load began" {
		t.Errorf("503s per second %v, the server's full-queue 503s %v, counted since %v", per503, app["queue_full_503"], http["since"])
	}
	tx := r.Transactions
	if tx == nil || len(tx.Phases) != 2 || len(tx.PerSecond) < 5 || tx.Rule == nil || tx.Rule.ErrorPct != 0.1 || tx.Rule.MeanFactor != 5 {
		t.Fatalf("transactions %+v", tx)
	}
	if tx.Break == nil || tx.Phases[1].Errors == 0 || tx.Phases[1].MeanMs == nil {
		t.Errorf("no break though phase 2 had %d errors of %d requests: %+v", tx.Phases[1].Errors, tx.Phases[1].Requests, tx.Break)
	}
	if !strings.Contains(out, "break: phase") || !strings.Contains(out, "HTTP 503 per second in phase ") {
		t.Errorf("the terminal shows no break or no 503s per second:\n%s", out)
	}
}
