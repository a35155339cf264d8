package apptier

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/scalelab/scalelab/app"
	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/internal/testenv"
)

// TestAbandonedRequestsEnd runs real HAProxy, with the balancer's
// configuration, in front of one app server that works on one request at
// once: when the load generator gives up on its requests (a run ends), the
// server's request in progress sees its context end and the request queued
// behind it does not run to its end either, so that no work of a finished
// run reaches the store after the next run has reset it.
func TestAbandonedRequestsEnd(t *testing.T) {
	bin, err := HAProxyPath()
	if err != nil {
		testenv.Unavailable(t, "HAProxy", err, "apt-get install haproxy")
	}
	started := make(chan string, 8)
	ended := make(chan error, 8)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- r.URL.Path
		select {
		case <-r.Context().Done():
			ended <- r.Context().Err()
		case <-time.After(20 * time.Second):
			ended <- nil
		}
	})
	srv := app.New(h, app.Config{MaxInFlight: 1, RequestTimeout: time.Minute})
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port, err := cluster.FreePort(cluster.Loopback)
	if err != nil {
		t.Fatal(err)
	}
	listen := net.JoinHostPort(cluster.Loopback, strconv.Itoa(port))
	sock := filepath.Join(dir, "haproxy.sock")
	cfg := haproxyConfig(balancerConfig{Listen: listen, Servers: []string{"app1=" + srv.Addr()}, Algorithm: "roundrobin",
		Check: 100 * time.Millisecond, Socket: sock, Timeout: time.Minute})
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for up := false; !up; {
		rows, _ := Stats(ctx, sock)
		for _, r := range rows {
			up = up || (r.Proxy == "app" && r.Name == "app1" && r.Status == "UP")
		}
		if time.Now().After(deadline) {
			t.Fatal("waited 30 s for the balancer to see app1 up")
		}
		time.Sleep(50 * time.Millisecond)
	}

	reqCtx, abandon := context.WithCancel(ctx)
	get := func(p string) {
		req, _ := http.NewRequestWithContext(reqCtx, http.MethodGet, "http://"+listen+p, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	go get("/held")
	if p := <-started; p != "/held" {
		t.Fatalf("first request handled: %s", p)
	}
	go get("/queued")
	for srv.Queued() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the second request never reached the server's queue")
		}
		time.Sleep(10 * time.Millisecond)
	}
	abandon()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the request in progress ran to its end after its client had gone")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request in progress did not see its client go within 10 s")
	}
	// the queued request is not handled, or, if it took the worker before
	// the server saw its client go, ends with its client as well
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the queued request ran to its end after its client had gone")
		}
	case <-time.After(2 * time.Second):
	}
}
