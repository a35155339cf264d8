package apptier

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/scalelab/scalelab/cluster"
	"github.com/scalelab/scalelab/internal/testenv"
)

// testBalancer is real HAProxy, with the balancer's configuration, in
// front of one app server (app1), started for a test.
type testBalancer struct {
	listen string // the balancer's address
	sock   string // its stats socket
}

// needHAProxy skips the test (or fails it under CI) without HAProxy.
func needHAProxy(t *testing.T) string {
	t.Helper()
	bin, err := HAProxyPath()
	if err != nil {
		testenv.Unavailable(t, "HAProxy", err, "apt-get install haproxy")
	}
	return bin
}

// startTestBalancer starts HAProxy in front of the app server at addr,
// stopped when the test ends (or ctx does), and waits until its health
// checks see app1 up.
func startTestBalancer(ctx context.Context, t *testing.T, bin, addr string) testBalancer {
	t.Helper()
	dir := t.TempDir()
	port, err := cluster.FreePort(cluster.Loopback)
	if err != nil {
		t.Fatal(err)
	}
	b := testBalancer{listen: net.JoinHostPort(cluster.Loopback, strconv.Itoa(port)), sock: filepath.Join(dir, "haproxy.sock")}
	cfg := haproxyConfig(balancerConfig{Listen: b.listen, Servers: []string{"app1=" + addr}, Algorithm: "roundrobin",
		Check: 100 * time.Millisecond, Socket: b.sock, Timeout: time.Minute})
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitFor(t, "the balancer to see app1 up", func() bool { return b.status(ctx) == "UP" })
	return b
}

// status is app1's status as the balancer sees it ("" when unknown).
func (b testBalancer) status(ctx context.Context) string {
	rows, err := Stats(ctx, b.sock)
	if err != nil {
		return ""
	}
	for _, r := range rows {
		if r.Proxy == "app" && r.Name == "app1" {
			return r.Status
		}
	}
	return ""
}

// waitFor polls ok for up to 30 s, failing the test after that.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
