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
)

// TestServeRecords: `scalelab serve records` on a SQLite file is the app
// tier of a run that loads the same file and drives the server over HTTP
// (records.app); Ctrl-C (the context) stops the server after its in-flight
// requests, and it reports what it served. Bad usage says what is allowed.
func TestServeRecords(t *testing.T) {
	t.Setenv("SCALELAB_HOME", t.TempDir())
	db := filepath.Join(t.TempDir(), "records.db")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, stop := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	var wg sync.WaitGroup
	var code int
	wg.Add(1)
	go func() {
		defer wg.Done()
		code = Main(ctx, []string{"serve", "records", "--target", db, "--listen", addr, "--max-inflight", "4", "--set", "records.bcrypt_cost=4"}, &out, &errb)
	}()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(end) {
			stop()
			wg.Wait()
			t.Fatalf("serve did not listen: %s %s", out.String(), errb.String())
		}
	}
	dir := filepath.Join(t.TempDir(), "r")
	rc, rout, rerr := run(t, context.Background(), "run", "records", "--target", db, "--duration", "3s", "--users", "4", "--out", dir, "--progress", "off",
		"--set", "records.app=http://"+addr, "--set", "records.bcrypt_cost=4", "--set", "records.providers=200", "--set", "records.patients=100",
		"--set", "records.think_page=50ms", "--set", "records.think_form=100ms")
	stop()
	wg.Wait()
	t.Logf("run: exit %d\n%s\nserve: %s", rc, rout, out.String())
	if rc != 0 {
		t.Fatalf("run against the server: exit %d: %s", rc, rerr)
	}
	if code != 0 || !strings.Contains(out.String(), "serving records on http://"+addr) {
		t.Fatalf("serve: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	r := readRun(t, dir)
	served := strings.TrimSpace(out.String()[strings.LastIndex(out.String(), "stopped after ")+len("stopped after "):])
	n, _ := strconv.Atoi(strings.Fields(served)[0])
	if r.Totals.Count == 0 || r.Totals.Errors != 0 || int64(n) < r.Totals.Count {
		t.Errorf("run totals %+v; the server served %d", r.Totals, n)
	}

	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"serve", "ycsb"}, "not a web application; scenarios that are: records"},
		{[]string{"serve", "records"}, "needs --target FILE"},
		{[]string{"serve"}, "one SCENARIO expected"},
		{[]string{"serve", "records", "--target", db, "--max-inflight", "-1"}, "must be 0 or more"},
	} {
		if code, _, errs := run(t, context.Background(), c.args...); code != ExitUsage || !strings.Contains(errs, c.says) {
			t.Errorf("%v: exit %d, %s (want %q)", c.args, code, errs, c.says)
		}
	}
}
