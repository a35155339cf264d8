package cli

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scalelab/scalelab/promsource/promtest"
	"github.com/scalelab/scalelab/results/resultstest"
)

// startServe runs `scalelab serve args...` until the returned stop is
// called (it then returns serve's exit code and output); it waits until
// addr accepts connections.
func startServe(t *testing.T, addr string, args ...string) (stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	var wg sync.WaitGroup
	var code int
	wg.Add(1)
	go func() {
		defer wg.Done()
		code = Main(ctx, append([]string{"serve"}, args...), &out, &errb)
	}()
	stop = func() (int, string) {
		cancel()
		wg.Wait()
		return code, out.String() + errb.String()
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return stop
		}
		if time.Now().After(end) {
			_, o := stop()
			t.Fatalf("serve did not listen on %s: %s", addr, o)
		}
	}
}

// TestServeMhealth: the mhealth backend over HTTP with the study's paths
// (`scalelab serve mhealth`), driven by `run mhealth --app URL`: every
// patient request goes over HTTP (counted by status), the load and the
// totals check use the store, nothing differs.
func TestServeMhealth(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	db := filepath.Join(t.TempDir(), "mhealth.db")
	addr := promtest.FreeAddr(t)
	stop := startServe(t, addr, "mhealth", "--target", db, "--listen", addr)
	dir := filepath.Join(t.TempDir(), "r")
	rc, rout, rerr := run(t, context.Background(), "run", "mhealth", "--target", db, "--app", "http://"+addr, "--users", "4", "--duration", "3s",
		"--set", "mhealth.weeks=1", "--set", "mhealth.patients=4", "--out", dir, "--progress", "off")
	t.Logf("run: exit %d\n%s", rc, rout)
	if rc != 0 {
		t.Fatalf("run exit %d (%s)", rc, rerr)
	}
	r := resultstest.Read(t, dir)
	http, _ := r.ScenarioReport["http"].(map[string]any)
	by, _ := http["by_operation"].(map[string]any)
	post, _ := by["activity.post"].(map[string]any)
	if n, _ := post["204"].(float64); n == 0 || r.Totals.Errors != 0 || len(r.Failures) != 0 {
		t.Errorf("activity.post responses %v, errors %d, failures %v", post, r.Totals.Errors, r.Failures)
	}
	// sessions sharing mhealth.app_conns connections: at most that many
	// requests at once, the others queued by the phases model
	dir2 := filepath.Join(t.TempDir(), "r2")
	rc, rout, rerr = run(t, context.Background(), "run", "mhealth", "--target", db, "--app", "http://"+addr, "--phases", "2s@20/s",
		"--set", "mhealth.weeks=1", "--set", "mhealth.hours_per_week=4", "--set", "mhealth.patients=4", "--set", "mhealth.app_conns=2", "--out", dir2, "--progress", "off")
	if rc != 0 {
		t.Fatalf("phases run with app_conns: exit %d: %s\n%s", rc, rerr, rout)
	}
	if r2 := resultstest.Read(t, dir2); r2.ClientQueue == nil || r2.ClientQueue.Slots != 2 || r2.ClientQueue.InProcess || r2.Totals.Errors != 0 || !strings.Contains(rout, "client queue: at most 2 operations at once (the client") {
		t.Errorf("client queue %+v, errors %d; output:\n%s", r2.ClientQueue, r2.Totals.Errors, rout)
	}
	code, sout := stop()
	if code != 0 {
		t.Fatalf("serve exit %d: %s", code, sout)
	}
	if code, _, errs := run(t, context.Background(), "run", "ycsb", "--app", "http://"+addr); code != ExitUsage || !strings.Contains(errs, "no HTTP backend") {
		t.Errorf("--app on ycsb: exit %d, %s", code, errs)
	}
}

// TestServeRecords: `scalelab serve records` on a SQLite file is the app
// tier of a run that loads the same file and drives the server over HTTP
// (records.app); Ctrl-C (the context) stops the server after its in-flight
// requests, and it reports what it served. Bad usage says what is allowed.
func TestServeRecords(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	db := filepath.Join(t.TempDir(), "records.db")
	addr := promtest.FreeAddr(t)
	stop := startServe(t, addr, "records", "--target", db, "--listen", addr, "--max-inflight", "4", "--set", "records.bcrypt_cost=4")
	dir := filepath.Join(t.TempDir(), "r")
	rc, rout, rerr := run(t, context.Background(), "run", "records", "--target", db, "--duration", "3s", "--users", "4", "--out", dir, "--progress", "off",
		"--app", "http://"+addr, "--set", "records.bcrypt_cost=4", "--set", "records.providers=200", "--set", "records.patients=100",
		"--set", "records.think_page=50ms", "--set", "records.think_form=100ms")
	code, sout := stop()
	t.Logf("run: exit %d\n%s\nserve: %s", rc, rout, sout)
	if rc != 0 {
		t.Fatalf("run against the server: exit %d: %s", rc, rerr)
	}
	if code != 0 || !strings.Contains(sout, "serving records on http://"+addr) {
		t.Fatalf("serve: exit %d\n%s", code, sout)
	}
	r := resultstest.Read(t, dir)
	served := strings.TrimSpace(sout[strings.LastIndex(sout, "stopped after ")+len("stopped after "):])
	n, _ := strconv.Atoi(strings.Fields(served)[0])
	if r.Totals.Count == 0 || r.Totals.Errors != 0 || int64(n) < r.Totals.Count {
		t.Errorf("run totals %+v; the server served %d", r.Totals, n)
	}

	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"serve", "ycsb"}, "not a web application; scenarios that are: mhealth, records"},
		{[]string{"serve", "records"}, "needs --target FILE"},
		{[]string{"serve"}, "no SCENARIO given"},
		{[]string{"serve", "records", "--target", db, "--max-inflight", "-1"}, "must be 0 or more"},
		{[]string{"serve", "records", "--target", db, "--max-inflight", "0", "--max-queue", "8"}, "needs a bound on the requests at once"},
		{[]string{"serve", "records", "--target", db, "--max-queue", "-2"}, "must be 0 (unbounded) or more"},
		{[]string{"serve", "records", "--target", db, "--listen", "nonsense"}, "--listen nonsense: HOST:PORT expected"},
		{[]string{"serve", "records", "--target", db, "--secret-file", filepath.Join(t.TempDir(), "none")}, "records.secret_file"},
		{[]string{"serve", "records", "--engine", "postgres", "--target", "postgres://u:hunter2@h/db"}, "holds a password"},
	} {
		if code, _, errs := run(t, context.Background(), c.args...); code != ExitUsage || !strings.Contains(errs, c.says) {
			t.Errorf("%v: exit %d, %s (want %q)", c.args, code, errs, c.says)
		}
	}
}

// TestServeMaxQueue: `serve records --max-inflight 1 --max-queue 1` under
// the study's sessions without think time answers 503 at once when its
// queue is full (bcrypt cost 8: a sign-up holds the one worker longer
// than the Go scheduler's 10 ms time slice, so that with GOMAXPROCS 1
// other requests reach the queue meanwhile); the run counts those 503s per second and finds the
// phase that broke, and serve says how many it shed.
func TestServeMaxQueue(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	db := filepath.Join(t.TempDir(), "records.db")
	addr := promtest.FreeAddr(t)
	stop := startServe(t, addr, "records", "--target", db, "--listen", addr, "--procs", "1", "--max-inflight", "1", "--max-queue", "1",
		"--set", "records.bcrypt_cost=8")
	dir := filepath.Join(t.TempDir(), "r")
	rc, rout, rerr := run(t, context.Background(), "run", "records", "--target", db, "--phases", "1s@1/s,3s@60/s", "--out", dir, "--progress", "off",
		"--app", "http://"+addr, "--set", "records.mix=study", "--set", "records.bcrypt_cost=8", "--set", "records.providers=200",
		"--set", "records.patients=100", "--set", "records.think_page=0s", "--set", "records.think_form=0s", "--set", "phases.break_errors=0.1")
	code, sout := stop()
	t.Logf("run: exit %d\n%s\nserve: %s", rc, rout, sout)
	if rc != 0 || code != 0 {
		t.Fatalf("run: exit %d: %s; serve: exit %d", rc, rerr, code)
	}
	if !strings.Contains(sout, "at most 1 queued") {
		t.Errorf("serve does not say its queue bound:\n%s", sout)
	}
	tail := sout[strings.LastIndex(sout, "; ")+2:]
	shed, _ := strconv.Atoi(strings.Fields(tail)[0])
	r := resultstest.Read(t, dir)
	http, _ := r.ScenarioReport["http"].(map[string]any)
	var n503 float64
	for _, s := range http["per_second"].([]any) {
		codes, _ := s.(map[string]any)["codes"].(map[string]any)
		n, _ := codes["503"].(float64)
		n503 += n
	}
	if shed == 0 || n503 == 0 || int(n503) > shed {
		t.Errorf("the server shed %d requests (%q), the run counted %v 503s", shed, tail, n503)
	}
	if r.Transactions == nil || r.Transactions.Break == nil || !strings.Contains(rout, "HTTP 503 per second in phase ") {
		t.Errorf("no break found: %+v", r.Transactions)
	}
}
